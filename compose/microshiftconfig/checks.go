package microshiftconfig

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// checkFormat checks a string value against a config.toml format; the
// error reads after the quoted value ("%q is not a CIDR").
func checkFormat(format, s string) error {
	switch format {
	case "cidr":
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return errors.New("is not a CIDR")
		}
		if pfx.Masked() != pfx {
			return fmt.Errorf("has host bits set (did you mean %q?)", pfx.Masked().String())
		}
	case "ip":
		if _, err := netip.ParseAddr(s); err != nil {
			return errors.New("is not an IP address")
		}
	case "ipv6":
		if a, err := netip.ParseAddr(s); err != nil || !a.Is6() || a.Is4In6() {
			return errors.New("is not an IPv6 address")
		}
	case "url":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return errors.New("is not a URL such as http://proxy.example.com:3128")
		}
	case "dns-subdomain":
		if !isDNSSubdomain(s) {
			return errors.New("is not a DNS domain (lowercase letters, digits, '-' and '.', RFC 1123)")
		}
	case "node-name":
		if _, err := netip.ParseAddr(s); err == nil {
			return errors.New("is an IP address; a node name must be a DNS name")
		}
		if !isDNSSubdomain(s) {
			return errors.New("is not a valid node name (lowercase DNS subdomain, RFC 1123)")
		}
	case "abs-path":
		if !strings.HasPrefix(s, "/") || strings.ContainsRune(s, 0) {
			return errors.New("is not an absolute path")
		}
	case "duration":
		if _, err := time.ParseDuration(s); err != nil {
			return errors.New("is not a duration such as \"10s\"")
		}
	case "port-range":
		return checkPortRange(s)
	case "device-name":
		if !deviceName.MatchString(s) {
			return fmt.Errorf("must match %s", deviceName)
		}
	case "device-permissions":
		if strings.Trim(s, "mrw") != "" {
			return errors.New("may hold only the letters m, r and w")
		}
	case "listen-address":
		// An IP of the host (not loopback or link-local: MicroShift
		// never listens there) or a network interface name.
		if a, err := netip.ParseAddr(s); err == nil {
			if a.IsLoopback() || a.IsLinkLocalUnicast() {
				return errors.New("is a loopback or link-local address, which the router does not listen on")
			}
			return nil
		}
		if len(s) > 15 || strings.ContainsAny(s, "/: \t") || s == "." || s == ".." {
			return errors.New("is neither an IP address nor a network interface name")
		}
	case "usb-id":
		h := strings.TrimPrefix(strings.ToLower(s), "0x")
		if _, err := strconv.ParseUint(h, 16, 16); err != nil {
			return errors.New("is not a USB ID (hexadecimal, at most 4 digits)")
		}
	}
	return nil
}

// deviceName is MicroShift's own rule for a generic device plugin device
// (deviceTypeRegexp in pkg/config/gdp.go), not a DNS name: kept as upstream
// writes it.
var deviceName = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// crossChecks are the rules that span keys (config.toml "check"), run for
// the ones the release has.
func (v *validator) crossChecks(tree map[string]any) error {
	checks := map[string]func(map[string]any) error{
		"networks":            checkTreeNetworks,
		"subject-alt-names":   checkSANs,
		"feature-gates":       checkFeatureGates,
		"dns-files":           checkDNSFiles,
		"dns-resources":       checkDNSResources,
		"csi-components":      checkCSIComponents,
		"cluster-to-cluster":  checkC2CC,
		"c2cc-probe-interval": checkProbeInterval,
	}
	done := map[string]bool{}
	for _, p := range v.rules.Paths() {
		k := v.rules.Key(p)
		if k.Check == "" || done[k.Check] {
			continue
		}
		done[k.Check] = true
		check, ok := checks[k.Check]
		if !ok {
			return fmt.Errorf("%s: unknown check %q in the release knowledge", p, k.Check)
		}
		if err := check(tree); err != nil {
			return err
		}
	}
	return nil
}

// checkTreeNetworks checks the pod and service networks together, with
// MicroShift's defaults for what the tree leaves unset.
func checkTreeNetworks(tree map[string]any) error {
	_, err := readParams(tree)
	return err
}

// kubernetesNames are the API server's own names, which MicroShift refuses
// as subjectAltNames.
var kubernetesNames = []string{
	"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local",
	"openshift", "openshift.default", "openshift.default.svc", "openshift.default.svc.cluster.local",
}

func checkSANs(tree map[string]any) error {
	r := reader{tree: tree}
	sans, ok, err := r.strs("apiServer.subjectAltNames")
	if err != nil || !ok {
		return err
	}
	p, err := readParams(tree)
	if err != nil {
		return err
	}
	svcIP, advertise := serviceIPs(p.ServiceNetwork[0])
	if a, ok, _ := r.str("apiServer.advertiseAddress"); ok && a != "" {
		advertise = a
	}
	for i, s := range sans {
		at := fmt.Sprintf("apiServer.subjectAltNames[%d]", i)
		switch {
		case s == "localhost" || s == "127.0.0.1":
			return fmt.Errorf("%s: %q: MicroShift refuses localhost and 127.0.0.1 (its API server has them already)", at, s)
		case slices.Contains(kubernetesNames, s) || s == svcIP:
			return fmt.Errorf("%s: %q is one of the kubernetes service's names or IPs, which MicroShift refuses", at, s)
		case s == advertise:
			return fmt.Errorf("%s: %q is the API server's advertise address, which MicroShift refuses", at, s)
		}
	}
	return nil
}

// serviceIPs returns the kubernetes service IP (the first address of the
// service network) and the API server advertise address MicroShift
// computes (the first address after the service network).
func serviceIPs(cidr string) (string, string) {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", ""
	}
	first := pfx.Masked().Addr().Next()
	n := new(big.Int).SetBytes(pfx.Masked().Addr().AsSlice())
	size := new(big.Int).Lsh(big.NewInt(1), uint(pfx.Addr().BitLen()-pfx.Bits()))
	n.Add(n, size)
	b := n.Bytes()
	width := pfx.Addr().BitLen() / 8
	if len(b) > width {
		return first.String(), ""
	}
	buf := make([]byte, width)
	copy(buf[width-len(b):], b)
	after, _ := netip.AddrFromSlice(buf)
	return first.String(), after.String()
}

// requiredGates are feature gates MicroShift refuses to disable.
var requiredGates = []string{"UserNamespacesSupport", "UserNamespacesPodSecurityStandards"}

func checkFeatureGates(tree map[string]any) error {
	r := reader{tree: tree}
	set, _, err := r.str("apiServer.featureGates.featureSet")
	if err != nil {
		return err
	}
	lists := map[string][]string{}
	names := []string{"customNoUpgrade.enabled", "customNoUpgrade.disabled", "specialHandlingSupportExceptionRequired.enabled", "specialHandlingSupportExceptionRequired.disabled"}
	for _, n := range names {
		l, _, err := r.strs("apiServer.featureGates." + n)
		if err != nil {
			return err
		}
		lists[n] = l
	}
	if set == "" {
		for _, n := range names {
			if len(lists[n]) > 0 {
				return fmt.Errorf("apiServer.featureGates.%s: must be empty unless featureSet is \"CustomNoUpgrade\"", n)
			}
		}
		return nil
	}
	for _, n := range []string{"customNoUpgrade.disabled", "specialHandlingSupportExceptionRequired.disabled"} {
		for _, g := range lists[n] {
			if slices.Contains(requiredGates, g) {
				return fmt.Errorf("apiServer.featureGates.%s: %s is required by MicroShift and cannot be disabled", n, g)
			}
		}
	}
	for _, en := range []string{"customNoUpgrade.enabled", "specialHandlingSupportExceptionRequired.enabled"} {
		for _, dis := range []string{"customNoUpgrade.disabled", "specialHandlingSupportExceptionRequired.disabled"} {
			for _, g := range lists[en] {
				if slices.Contains(lists[dis], g) {
					return fmt.Errorf("apiServer.featureGates: %s is both enabled (%s) and disabled (%s)", g, en, dis)
				}
			}
		}
	}
	return nil
}

func checkDNSFiles(tree map[string]any) error {
	r := reader{tree: tree}
	file, _, err := r.str("dns.configFile")
	if err != nil {
		return err
	}
	status, _, err := r.str("dns.hosts.status")
	if err != nil {
		return err
	}
	if file != "" && status == "Enabled" {
		return errors.New("dns.configFile: cannot be set while dns.hosts.status is Enabled (MicroShift: they are mutually exclusive)")
	}
	return nil
}

// dnsResourceMinimum are MicroShift's DNS resource defaults, which are
// also the smallest requests it accepts.
var dnsResourceMinimum = map[string]string{"cpu": "50m", "memory": "70Mi"}

func checkDNSResources(tree map[string]any) error {
	r := reader{tree: tree}
	values := map[string]map[string]*big.Rat{}
	for _, which := range []string{"requests", "limits"} {
		v, ok, err := r.get("dns.resources." + which)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("dns.resources.%s: must be a mapping, got %s", which, kind(v))
		}
		values[which] = map[string]*big.Rat{}
		for name, q := range m {
			at := "dns.resources." + which + "." + name
			if _, known := dnsResourceMinimum[name]; !known {
				return fmt.Errorf("%s: unsupported resource %q (MicroShift allows cpu and memory)", at, name)
			}
			s, ok := q.(string)
			if !ok {
				return fmt.Errorf("%s: must be a quantity string such as \"100m\" or \"128Mi\", got %s", at, kind(q))
			}
			n, err := parseQuantity(s)
			if err != nil {
				return fmt.Errorf("%s: %q is not a Kubernetes quantity", at, s)
			}
			values[which][name] = n
		}
	}
	for name, floor := range dnsResourceMinimum {
		min, _ := parseQuantity(floor)
		req := min
		if v, ok := values["requests"][name]; ok {
			if v.Cmp(min) < 0 {
				return fmt.Errorf("dns.resources.requests.%s: below MicroShift's minimum %s", name, floor)
			}
			req = v
		}
		if lim, ok := values["limits"][name]; ok && lim.Cmp(req) < 0 {
			return fmt.Errorf("dns.resources.limits.%s: must be at least the request", name)
		}
	}
	return nil
}

var quantity = lazyregexp.New(`^([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)

// parseQuantity reads the Kubernetes quantity forms MicroShift's DNS
// resources take (decimal and binary suffixes).
func parseQuantity(s string) (*big.Rat, error) {
	m := quantity.FindStringSubmatch(s)
	if m == nil {
		return nil, errors.New("not a quantity")
	}
	n, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, errors.New("not a quantity")
	}
	mult := map[string]*big.Rat{
		"": big.NewRat(1, 1), "m": big.NewRat(1, 1000),
		"k": big.NewRat(1e3, 1), "M": big.NewRat(1e6, 1), "G": big.NewRat(1e9, 1), "T": big.NewRat(1e12, 1),
		"P": big.NewRat(1e15, 1), "E": big.NewRat(1e18, 1),
		"Ki": big.NewRat(1<<10, 1), "Mi": big.NewRat(1<<20, 1), "Gi": big.NewRat(1<<30, 1), "Ti": big.NewRat(1<<40, 1),
		"Pi": big.NewRat(1<<50, 1), "Ei": big.NewRat(1<<60, 1),
	}[m[3]]
	return n.Mul(n, mult), nil
}

func checkCSIComponents(tree map[string]any) error {
	list, ok, err := reader{tree: tree}.strs("storage.optionalCsiComponents")
	if err != nil || !ok {
		return err
	}
	for i, v := range list {
		if v == "none" && len(list) > 1 {
			return fmt.Errorf("storage.optionalCsiComponents[%d]: \"none\" cannot be combined with other components", i)
		}
	}
	return nil
}

func checkProbeInterval(tree map[string]any) error {
	s, ok, err := reader{tree: tree}.str("clusterToCluster.probeInterval")
	if err != nil || !ok || s == "" {
		return err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("clusterToCluster.probeInterval: %q is not a duration such as \"10s\"", s)
	}
	if d < time.Second || d > 5*time.Minute {
		return fmt.Errorf("clusterToCluster.probeInterval: %s must be between 1s and 5m", s)
	}
	return nil
}

// checkC2CC checks clusterToCluster.remoteClusters the way MicroShift does
// when any entry is set (entries with every field empty are ignored).
func checkC2CC(tree map[string]any) error {
	r := reader{tree: tree}
	v, ok, err := r.get("clusterToCluster.remoteClusters")
	if err != nil || !ok {
		return err
	}
	list, _ := v.([]any)
	p, err := readParams(tree)
	if err != nil {
		return err
	}
	local := append(append([]string{}, p.ClusterNetwork...), p.ServiceNetwork...)
	seenHop, seenDomain := map[string]int{}, map[string]int{}
	var remote []struct {
		at   string
		cidr netip.Prefix
	}
	set := 0
	for i, e := range list {
		m, _ := e.(map[string]any)
		if len(m) == 0 {
			continue
		}
		er := reader{tree: m}
		at := fmt.Sprintf("clusterToCluster.remoteClusters[%d]", i)
		hops, _, err := er.strs("nextHop")
		if err != nil {
			return fmt.Errorf("%s.%v", at, err)
		}
		cn, _, err := er.strs("clusterNetwork")
		if err != nil {
			return fmt.Errorf("%s.%v", at, err)
		}
		sn, _, err := er.strs("serviceNetwork")
		if err != nil {
			return fmt.Errorf("%s.%v", at, err)
		}
		domain, _, err := er.str("domain")
		if err != nil {
			return fmt.Errorf("%s.%v", at, err)
		}
		if len(hops) == 0 && len(cn) == 0 && len(sn) == 0 && domain == "" {
			continue
		}
		set++
		if len(hops) == 0 {
			return fmt.Errorf("%s.nextHop: must not be empty", at)
		}
		families := map[bool]bool{}
		for j, h := range hops {
			a, err := netip.ParseAddr(h)
			if err != nil {
				return fmt.Errorf("%s.nextHop[%d]: %q is not an IP address", at, j, h)
			}
			if families[a.Is4()] {
				return fmt.Errorf("%s.nextHop: at most one address per IP family", at)
			}
			families[a.Is4()] = true
			if prev, dup := seenHop[h]; dup {
				return fmt.Errorf("%s.nextHop[%d]: %s is also the next hop of remoteClusters[%d]", at, j, h, prev)
			}
			seenHop[h] = i
			if h == p.NodeIP {
				return fmt.Errorf("%s.nextHop[%d]: %s is this node's IP (a routing loop)", at, j, h)
			}
		}
		for _, nets := range []struct {
			name  string
			cidrs []string
		}{{"clusterNetwork", cn}, {"serviceNetwork", sn}} {
			if len(nets.cidrs) == 0 {
				return fmt.Errorf("%s.%s: must not be empty", at, nets.name)
			}
			for j, c := range nets.cidrs {
				pfx, err := netip.ParsePrefix(c)
				if err != nil {
					return fmt.Errorf("%s.%s[%d]: %q is not a CIDR", at, nets.name, j, c)
				}
				if floor := map[bool]int{true: 8, false: 32}[pfx.Addr().Is4()]; pfx.Bits() < floor {
					return fmt.Errorf("%s.%s[%d]: %s has a mask shorter than /%d", at, nets.name, j, c, floor)
				}
				for _, l := range local {
					if lp, err := netip.ParsePrefix(l); err == nil && lp.Overlaps(pfx) {
						return fmt.Errorf("%s.%s[%d]: %s overlaps the local network %s", at, nets.name, j, c, l)
					}
				}
				for _, o := range remote {
					if o.cidr.Overlaps(pfx) {
						return fmt.Errorf("%s.%s[%d]: %s overlaps %s", at, nets.name, j, c, o.at)
					}
				}
				remote = append(remote, struct {
					at   string
					cidr netip.Prefix
				}{fmt.Sprintf("%s.%s[%d] %s", at, nets.name, j, c), pfx})
			}
		}
		if domain != "" {
			if domain == "cluster.local" {
				return fmt.Errorf("%s.domain: cannot be cluster.local", at)
			}
			if err := checkFormat("dns-subdomain", domain); err != nil {
				return fmt.Errorf("%s.domain: %q %v", at, domain, err)
			}
			if prev, dup := seenDomain[domain]; dup {
				return fmt.Errorf("%s.domain: %s is also the domain of remoteClusters[%d]", at, domain, prev)
			}
			seenDomain[domain] = i
		}
	}
	if set == 0 {
		return nil
	}
	cni, _, err := r.str("network.cniPlugin")
	if err != nil {
		return err
	}
	if cni != "" && cni != "ovnk" {
		return fmt.Errorf("clusterToCluster.remoteClusters: needs OVN-Kubernetes (network.cniPlugin %q; MicroShift requires \"\" or \"ovnk\")", cni)
	}
	return nil
}
