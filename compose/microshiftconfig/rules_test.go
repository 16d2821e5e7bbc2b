package microshiftconfig_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

func rulesFor(t testing.TB, version string) *knowledge.Rules {
	t.Helper()
	k, err := knowledge.Default()
	if err != nil {
		t.Fatalf("knowledge.Default() = %v", err)
	}
	r, err := k.For(semver.MustParse(version))
	if err != nil {
		t.Fatalf("knowledge.For(%s) = %v", version, err)
	}
	return r.Config
}

// referenceBranches are the upstream branches whose default config.yaml
// is in ../shared, and the release each is.
var referenceBranches = map[string]string{
	"release-4.14": "4.14.0", "release-4.15": "4.15.0", "release-4.16": "4.16.0", "release-4.17": "4.17.0",
	"release-4.18": "4.18.0", "release-4.19": "4.19.0", "release-4.20": "4.20.0", "release-4.21": "4.21.0",
	"release-4.22": "4.22.0", "main": "5.0.0",
}

// Every release's own default config.yaml (what the RPM installs as
// config.yaml.default) passes that release's rules and changes nothing:
// its every value is a default, an unset value or a placeholder.
func TestReferenceConfigsPassTheirRelease(t *testing.T) {
	for branch, version := range referenceBranches {
		t.Run(branch, func(t *testing.T) {
			path := testutil.Shared(t, "reference", "microshift-config", "config.yaml."+branch)
			c, err := microshiftconfig.Load(path)
			if err != nil {
				t.Fatalf("Load() = %v", err)
			}
			s, err := c.For(rulesFor(t, version))
			if err != nil {
				t.Fatalf("For(%s) = %v", version, err)
			}
			if len(s.Changes) != 0 {
				t.Errorf("Changes = %#v, want none: the file is MicroShift's defaults", s.Changes)
			}
			// Every key the release knows is in its default file, so
			// every one of them is reported as left out.
			if got, want := len(s.Defaulted), len(rulesFor(t, version).Paths()); got < want/2 {
				t.Errorf("Defaulted has %d paths, want most of the release's %d keys", got, want)
			}
		})
	}
}

// A newer release's default config names keys an older release does not
// have: checked against the older rules, the first such key is an error
// that says where it exists.
func TestReferenceConfigOfNewerRelease(t *testing.T) {
	c, err := microshiftconfig.Load(testutil.Shared(t, "reference", "microshift-config", "config.yaml.main"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.For(rulesFor(t, "4.18.0"))
	if err == nil || !strings.HasSuffix(err.Error(), `: apiServer.featureGates: MicroShift 4.18 has no such setting (it exists from MicroShift 4.21)`) {
		t.Errorf("For(4.18) = %v, want the first 5.0-only key named", err)
	}
}

func TestReleaseRules(t *testing.T) {
	for _, tc := range []struct {
		name, release, doc, want string
	}{
		// Keys by release.
		{"cniPlugin on 4.17", "4.17.0", "network:\n  cniPlugin: none\n", `network.cniPlugin: MicroShift 4.17 has no such setting (it exists from MicroShift 4.18)`},
		{"cniPlugin on 4.18", "4.18.0", "network:\n  cniPlugin: none\n", ``},
		{"multus on 4.18", "4.18.0", "network:\n  multus:\n    status: Enabled\n", `network.multus: MicroShift 4.18 has no such setting (it exists from MicroShift 4.19)`},
		{"storage on 4.16", "4.16.0", "storage:\n  driver: none\n", `storage: MicroShift 4.16 has no such setting (it exists from MicroShift 4.17)`},
		{"telemetry on 4.18", "4.18.0", "telemetry:\n  status: Disabled\n", `telemetry: MicroShift 4.18 has no such setting (it exists from MicroShift 4.19)`},
		{"clusterToCluster on 4.21", "4.21.0", "clusterToCluster:\n  probeInterval: 20s\n", `clusterToCluster: MicroShift 4.21 has no such setting (it exists from MicroShift 4.22)`},
		{"ingress on 4.15", "4.15.0", "ingress:\n  status: Removed\n", `ingress: MicroShift 4.15 has no such setting (it exists from MicroShift 4.16)`},
		{"dns.resources on 4.22", "4.22.0", "dns:\n  resources:\n    requests: {cpu: 100m}\n", `dns.resources: MicroShift 4.22 has no such setting (it exists from MicroShift 5.0)`},
		// Typos and unknown keys.
		{"unknown section, typo", "5.0.0", "netwrok:\n  cniPlugin: none\n", `unknown section "netwrok"; did you mean "network"?`},
		{"unknown section, case", "5.0.0", "apiserver:\n  subjectAltNames: []\n", `unknown section "apiserver"; did you mean "apiServer"?`},
		{"unknown section", "4.14.0", "cluster:\n  name: x\n", `unknown section "cluster" (MicroShift 4.14 has apiServer, debugging, dns, etcd, manifests, network, node)`},
		{"unknown key with suggestion", "5.0.0", "network:\n  clusterNetworks: [10.42.0.0/16]\n", `network: unknown key "clusterNetworks"; did you mean "clusterNetwork"?`},
		{"unknown node key", "5.0.0", "node:\n  labels: {a: b}\n", `node: unknown key "labels" (MicroShift 5.0 has hostnameOverride, nodeIP, nodeIPv6)`},
		{"unknown key in a list entry", "5.0.0", "apiServer:\n  namedCertificates:\n  - certPath: /c\n    keyFile: /k\n", `apiServer.namedCertificates[0]: unknown key "keyFile" (MicroShift 5.0 has certPath, keyPath, names)`},
		{"storage drivers typo", "4.17.0", "storage:\n  drivers: lvms\n", `storage: unknown key "drivers"; did you mean "driver"?`},
		// Types.
		{"cniPlugin a mapping", "5.0.0", "network:\n  cniPlugin:\n    name: ovnk\n", `network.cniPlugin: must be a string, got a mapping`},
		{"memoryLimitMB quoted", "5.0.0", "etcd:\n  memoryLimitMB: \"200\"\n", `etcd.memoryLimitMB: must be an integer, got a string`},
		{"memoryLimitMB negative", "5.0.0", "etcd:\n  memoryLimitMB: -1\n", `etcd.memoryLimitMB: must not be negative, got -1`},
		{"memoryLimitMB fraction", "5.0.0", "etcd:\n  memoryLimitMB: 1.5\n", `etcd.memoryLimitMB: must be an integer, got a number`},
		{"readOnly not a bool", "5.0.0", "genericDevicePlugin:\n  devices:\n  - name: x\n    groups:\n    - paths:\n      - path: /dev/x\n        readOnly: yes-please\n", `genericDevicePlugin.devices[0].groups[0].paths[0].readOnly: must be true or false, got a string`},
		{"duration not a duration", "5.0.0", "ingress:\n  tuningOptions:\n    clientTimeout: soon\n", `ingress.tuningOptions.clientTimeout: "soon" is not a duration such as "30s"`},
		{"duration a number", "5.0.0", "ingress:\n  tuningOptions:\n    clientTimeout: 30\n", `ingress.tuningOptions.clientTimeout: must be a duration such as "30s", got a number`},
		{"health check below 1s", "5.0.0", "ingress:\n  tuningOptions:\n    healthCheckInterval: 500ms\n", `ingress.tuningOptions.healthCheckInterval: 500ms is below the minimum 1s (MicroShift ignores it)`},
		{"kubelet a string", "5.0.0", "kubelet: max-pods\n", `kubelet: must be a mapping, got a string`},
		{"tls profile old not empty", "5.0.0", "ingress:\n  tlsSecurityProfile:\n    old: {ciphers: [x]}\n", `ingress.tlsSecurityProfile.old: unknown key "ciphers" (ingress.tlsSecurityProfile.old takes an empty mapping)`},
		// Values.
		{"cniPlugin unknown", "4.18.0", "network:\n  cniPlugin: calico\n", `network.cniPlugin: "calico" is not one of "", "none", "ovnk" (MicroShift 4.18)`},
		{"cniPlugin upper case", "5.0.0", "network:\n  cniPlugin: OVNK\n", `network.cniPlugin: "OVNK" is not one of "", "none", "ovnk" (MicroShift 5.0)`},
		{"storage driver unknown", "4.17.0", "storage:\n  driver: topolvm\n", `storage.driver: "topolvm" is not one of "", "none", "lvms" (MicroShift 4.17)`},
		{"multus Removed on 4.21", "4.21.0", "network:\n  multus:\n    status: Removed\n", `network.multus.status: "Removed" is not one of "", "Enabled", "Disabled" (MicroShift 4.21)`},
		{"multus Managed on 4.19", "4.19.0", "network:\n  multus:\n    status: Managed\n", `network.multus.status: "Managed" is not one of "", "Enabled", "Disabled" (MicroShift 4.19)`},
		{"multus Disabled", "5.0.0", "network:\n  multus:\n    status: Disabled\n", ``},
		{"snapshot-webhook on 4.17", "4.17.0", "storage:\n  optionalCsiComponents: [snapshot-webhook]\n", ``},
		{"snapshot-webhook on 4.18", "4.18.0", "storage:\n  optionalCsiComponents: [snapshot-webhook]\n", `storage.optionalCsiComponents[0]: "snapshot-webhook" is not one of "", "none", "snapshot-controller" (MicroShift 4.18)`},
		{"optionalCsiComponents none combined", "5.0.0", "storage:\n  optionalCsiComponents: [snapshot-controller, none]\n", `storage.optionalCsiComponents[1]: "none" cannot be combined with other components`},
		{"ingress status", "4.16.0", "ingress:\n  status: Disabled\n", `ingress.status: "Disabled" is not one of "", "Managed", "Removed" (MicroShift 4.16)`},
		{"ingress port zero", "5.0.0", "ingress:\n  ports:\n    http: 0\n", `ingress.ports.http: 0 is below the minimum 1`},
		{"ingress port too high", "5.0.0", "ingress:\n  ports:\n    https: 70000\n", `ingress.ports.https: 70000 is above the maximum 65535`},
		{"audit profile", "4.16.0", "apiServer:\n  auditLog:\n    profile: Verbose\n", `apiServer.auditLog.profile: "Verbose" is not one of "", "Default", "WriteRequestBodies", "AllRequestBodies", "None" (MicroShift 4.16)`},
		{"audit negative", "5.0.0", "apiServer:\n  auditLog:\n    maxFiles: -3\n", `apiServer.auditLog.maxFiles: -3 is below the minimum 0`},
		{"etcd memory below minimum", "5.0.0", "etcd:\n  memoryLimitMB: 100\n", `etcd.memoryLimitMB: 100 is below the minimum 128 (or 0 for MicroShift's default)`},
		{"tls version", "4.19.0", "apiServer:\n  tls:\n    minVersion: VersionTLS11\n", `apiServer.tls.minVersion: "VersionTLS11" is not one of "", "VersionTLS12", "VersionTLS13" (MicroShift 4.19)`},
		{"cipher suite", "4.19.0", "apiServer:\n  tls:\n    cipherSuites: [TLS_RSA_WITH_RC4_128_SHA]\n", `apiServer.tls.cipherSuites[0]: "TLS_RSA_WITH_RC4_128_SHA" is not one of "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" (MicroShift 4.19)`},
		{"telemetry status", "4.19.0", "telemetry:\n  status: Paused\n", `telemetry.status: "Paused" is not one of "", "Enabled", "Disabled" (MicroShift 4.19)`},
		{"telemetry proxy", "4.19.0", "telemetry:\n  proxy: \"::not a url\"\n", `telemetry.proxy: "::not a url" is not a URL such as http://proxy.example.com:3128`},
		{"logLevel any case", "5.0.0", "debugging:\n  logLevel: debug\n", ``},
		{"gdp device name", "4.20.0", "genericDevicePlugin:\n  devices:\n  - name: Serial_1\n", `genericDevicePlugin.devices[0].name: "Serial_1" must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`},
		{"gdp permissions", "4.20.0", "genericDevicePlugin:\n  devices:\n  - name: s\n    groups:\n    - paths:\n      - path: /dev/x\n        permissions: rwx\n", `genericDevicePlugin.devices[0].groups[0].paths[0].permissions: "rwx" may hold only the letters m, r and w`},
		{"gdp usb id", "4.20.0", "genericDevicePlugin:\n  devices:\n  - name: s\n    groups:\n    - usbs:\n      - vendor: xyz\n", `genericDevicePlugin.devices[0].groups[0].usbs[0].vendor: "xyz" is not a USB ID (hexadecimal, at most 4 digits)`},
		{"access log cookies", "4.20.0", "ingress:\n  accessLogging:\n    httpCaptureCookies:\n    - {name: a, matchType: Exact, maxLength: 10}\n    - {name: b, matchType: Exact, maxLength: 10}\n", `ingress.accessLogging.httpCaptureCookies: at most 1 entries, got 2`},
		{"listen address a CIDR", "4.18.0", "ingress:\n  listenAddress: [10.42.0.0/16]\n", `ingress.listenAddress[0]: "10.42.0.0/16" is neither an IP address nor a network interface name`},
		{"listen address loopback", "4.18.0", "ingress:\n  listenAddress: [127.0.0.1]\n", `ingress.listenAddress[0]: "127.0.0.1" is a loopback or link-local address, which the router does not listen on`},
		{"listen address an interface", "4.18.0", "ingress:\n  listenAddress: [eth0, 192.168.1.5]\n", ``},
		{"syslog address", "4.20.0", "ingress:\n  accessLogging:\n    destination:\n      syslog:\n        address: syslog.local\n", `ingress.accessLogging.destination.syslog.address: "syslog.local" is not an IP address`},
		// Rules that span keys.
		{"SAN localhost", "5.0.0", "apiServer:\n  subjectAltNames: [edge.example.com, localhost]\n", `apiServer.subjectAltNames[1]: "localhost": MicroShift refuses localhost and 127.0.0.1 (its API server has them already)`},
		{"SAN kubernetes", "5.0.0", "apiServer:\n  subjectAltNames: [kubernetes.default.svc]\n", `apiServer.subjectAltNames[0]: "kubernetes.default.svc" is one of the kubernetes service's names or IPs, which MicroShift refuses`},
		{"SAN service IP", "5.0.0", "apiServer:\n  subjectAltNames: [10.43.0.1]\n", `apiServer.subjectAltNames[0]: "10.43.0.1" is one of the kubernetes service's names or IPs, which MicroShift refuses`},
		{"SAN advertise address", "5.0.0", "apiServer:\n  subjectAltNames: [10.44.0.0]\n", `apiServer.subjectAltNames[0]: "10.44.0.0" is the API server's advertise address, which MicroShift refuses`},
		{"feature gates without a set", "4.21.0", "apiServer:\n  featureGates:\n    customNoUpgrade:\n      enabled: [Foo]\n", `apiServer.featureGates.customNoUpgrade.enabled: must be empty unless featureSet is "CustomNoUpgrade"`},
		{"feature gates tech preview", "4.21.0", "apiServer:\n  featureGates:\n    featureSet: TechPreviewNoUpgrade\n", `apiServer.featureGates.featureSet: "TechPreviewNoUpgrade" is not one of "", "CustomNoUpgrade" (MicroShift 4.21)`},
		{"feature gate required", "4.21.0", "apiServer:\n  featureGates:\n    featureSet: CustomNoUpgrade\n    customNoUpgrade:\n      disabled: [UserNamespacesSupport]\n", `apiServer.featureGates.customNoUpgrade.disabled: UserNamespacesSupport is required by MicroShift and cannot be disabled`},
		{"feature gate both", "5.0.0", "apiServer:\n  featureGates:\n    featureSet: CustomNoUpgrade\n    customNoUpgrade:\n      enabled: [A]\n    specialHandlingSupportExceptionRequired:\n      disabled: [A]\n", `apiServer.featureGates: A is both enabled (customNoUpgrade.enabled) and disabled (specialHandlingSupportExceptionRequired.disabled)`},
		{"dns files exclusive", "4.22.0", "dns:\n  configFile: /etc/microshift/Corefile\n  hosts:\n    status: Enabled\n", `dns.configFile: cannot be set while dns.hosts.status is Enabled (MicroShift: they are mutually exclusive)`},
		{"dns hosts relative", "4.21.0", "dns:\n  hosts:\n    status: Enabled\n    file: hosts\n", `dns.hosts.file: "hosts" is not an absolute path`},
		{"dns resources key", "5.0.0", "dns:\n  resources:\n    requests: {gpu: \"1\"}\n", `dns.resources.requests.gpu: unsupported resource "gpu" (MicroShift allows cpu and memory)`},
		{"dns resources quantity", "5.0.0", "dns:\n  resources:\n    requests: {cpu: lots}\n", `dns.resources.requests.cpu: "lots" is not a Kubernetes quantity`},
		{"dns resources minimum", "5.0.0", "dns:\n  resources:\n    requests: {memory: 10Mi}\n", `dns.resources.requests.memory: below MicroShift's minimum 70Mi`},
		{"dns resources limit below request", "5.0.0", "dns:\n  resources:\n    requests: {cpu: 200m}\n    limits: {cpu: 100m}\n", `dns.resources.limits.cpu: must be at least the request`},
		{"dns resources fine", "5.0.0", "dns:\n  resources:\n    requests: {cpu: 100m, memory: 128Mi}\n    limits: {cpu: \"1\", memory: 1Gi}\n", ``},
		{"c2cc without next hop", "4.22.0", "clusterToCluster:\n  remoteClusters:\n  - clusterNetwork: [10.45.0.0/16]\n    serviceNetwork: [10.46.0.0/16]\n", `clusterToCluster.remoteClusters[0].nextHop: must not be empty`},
		{"c2cc overlap", "4.22.0", "clusterToCluster:\n  remoteClusters:\n  - nextHop: [192.168.1.20]\n    clusterNetwork: [10.42.0.0/16]\n    serviceNetwork: [10.46.0.0/16]\n", `clusterToCluster.remoteClusters[0].clusterNetwork[0]: 10.42.0.0/16 overlaps the local network 10.42.0.0/16`},
		{"c2cc with no CNI", "4.22.0", "network:\n  cniPlugin: none\nclusterToCluster:\n  remoteClusters:\n  - nextHop: [192.168.1.20]\n    clusterNetwork: [10.45.0.0/16]\n    serviceNetwork: [10.46.0.0/16]\n", `clusterToCluster.remoteClusters: needs OVN-Kubernetes (network.cniPlugin "none"; MicroShift requires "" or "ovnk")`},
		{"c2cc fine", "4.22.0", "clusterToCluster:\n  remoteClusters:\n  - nextHop: [192.168.1.20]\n    clusterNetwork: [10.45.0.0/16]\n    serviceNetwork: [10.46.0.0/16]\n    domain: remote.example.com\n", ``},
		{"c2cc placeholder entry", "4.22.0", "clusterToCluster:\n  remoteClusters:\n  - clusterNetwork: []\n    domain: \"\"\n", ``},
		{"probe interval", "4.22.0", "clusterToCluster:\n  probeInterval: 10m\n", `clusterToCluster.probeInterval: 10m must be between 1s and 5m`},
		{"route table", "4.22.0", "clusterToCluster:\n  routing:\n    routeTableID: 300\n", `clusterToCluster.routing.routeTableID: 300 is above the maximum 252`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := microshiftconfig.Parse("cfg/config.yaml", []byte(tc.doc))
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			_, err = c.For(rulesFor(t, tc.release))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("For(%s) = %v, want no error", tc.release, err)
			case tc.want != "" && err == nil:
				t.Errorf("For(%s) = nil, want %s", tc.release, tc.want)
			case tc.want != "" && err.Error() != "cfg/config.yaml: "+tc.want:
				t.Errorf("For(%s) error:\n got: %s\nwant: cfg/config.yaml: %s", tc.release, err, tc.want)
			}
		})
	}
}

// Values that change nothing on the device stay out of the plan: unset,
// zero values MicroShift reads as unset, lists of empty strings,
// placeholders and defaults; values whose zero means something stay.
func TestChanges(t *testing.T) {
	doc := `network:
  clusterNetwork: [10.42.0.0/16]
  serviceNodePortRange: 20000-20999
  cniPlugin: ""
debugging:
  logLevel: Normal
kubelet:
etcd: {}
node:
  hostnameOverride: edge-1
apiServer:
  subjectAltNames: [""]
  namedCertificates:
  - certPath: ""
    keyPath: ""
    names: []
manifests:
  kustomizePaths: []
ingress:
  ports:
    http: 8080
  tlsSecurityProfile:
    type: ""
    old: {}
`
	c, err := microshiftconfig.Parse("c.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.For(rulesFor(t, "5.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"network":   map[string]any{"serviceNodePortRange": "20000-20999"},
		"node":      map[string]any{"hostnameOverride": "edge-1"},
		"manifests": map[string]any{"kustomizePaths": []any{}},
		"ingress":   map[string]any{"ports": map[string]any{"http": int64(8080)}},
	}
	if !reflect.DeepEqual(s.Changes, want) {
		t.Errorf("Changes = %#v\nwant %#v", s.Changes, want)
	}
	wantDropped := []string{
		"apiServer.namedCertificates", "apiServer.subjectAltNames", "debugging.logLevel", "etcd",
		"ingress.tlsSecurityProfile.old", "ingress.tlsSecurityProfile.type", "kubelet",
		"network.clusterNetwork", "network.cniPlugin",
	}
	if !reflect.DeepEqual(s.Defaulted, wantDropped) {
		t.Errorf("Defaulted = %v\nwant %v", s.Defaulted, wantDropped)
	}
}

// Keys whose rules MicroShift checks against the device itself are noted
// when they are set, not when left at their placeholder.
func TestDeviceChecked(t *testing.T) {
	c, err := microshiftconfig.Parse("c.yaml", []byte("apiServer:\n  advertiseAddress: 192.168.1.5\ningress:\n  listenAddress: [\"\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.For(rulesFor(t, "5.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.DeviceChecked) != 1 || !strings.HasPrefix(s.DeviceChecked[0], "apiServer.advertiseAddress: ") {
		t.Errorf("DeviceChecked = %q, want the advertise address only", s.DeviceChecked)
	}
}
