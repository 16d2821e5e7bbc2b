package request

import (
	"fmt"
	"strings"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Request is one composition as the user asks for it: everything the
// flags of build, resolve, images, mirror and matrix hold, and the lists a
// matrix spans. Each field's flag tag names the flag it mirrors (one with
// a list value for the matrix lists); its toml tag is its key in a
// composition file. A field is added to the file, the flags' mapping and
// the schema by adding it here with both tags.
type Request struct {
	// Catalog, Release and ReleaseDir choose what is composed from.
	Catalog    DirPath `toml:"catalog,omitempty" flag:"catalog"`
	Release    string  `toml:"release,omitempty" flag:"release"`
	ReleaseDir DirPath `toml:"release_dir,omitempty" flag:"release-dir"`

	// The selection.
	Profile string   `toml:"profile,omitempty" flag:"profile"`
	With    []string `toml:"with,omitempty" flag:"with"`
	Without []string `toml:"without,omitempty" flag:"without"`
	Arch    string   `toml:"arch,omitempty" flag:"arch"`

	// The lists a matrix spans, one cell per combination (matrix -f);
	// build, resolve, images and mirror take a list of one.
	Profiles    []string  `toml:"profiles,omitempty" flag:"profile" list:"profile"`
	Arches      []string  `toml:"arches,omitempty" flag:"arch" list:"arch"`
	Releases    []string  `toml:"releases,omitempty" flag:"release" list:"release"`
	ReleaseDirs []DirPath `toml:"release_dirs,omitempty" flag:"release-dir" list:"release_dir"`

	// What the blueprint is built and checked for.
	Distro    string `toml:"distro,omitempty" flag:"distro"`
	ImageType string `toml:"image_type,omitempty" flag:"image-type"`

	// Checks on the release and the images.
	AllowUnpinned bool        `toml:"allow_unpinned,omitempty" flag:"allow-unpinned"`
	AllowRedBoot  bool        `toml:"allow_red_boot,omitempty" flag:"allow-red-boot"`
	ExactVersion  bool        `toml:"exact_version,omitempty" flag:"exact-version"`
	StrictRelease bool        `toml:"strict_release,omitempty" flag:"strict-release"`
	UpgradeFrom   UpgradeFrom `toml:"upgrade_from,omitempty" flag:"upgrade-from"`
	PluginTimeout Duration    `toml:"plugin_timeout,omitempty,omitzero" flag:"plugin-timeout"`

	// Hardening: FIPS mode, kernel arguments and a CIS profile.
	FIPS       bool     `toml:"fips,omitempty" flag:"fips"`
	KernelArgs []string `toml:"kernel_args,omitempty" flag:"karg"`
	CIS        string   `toml:"cis,omitempty" flag:"cis"`

	MicroShift   MicroShift     `toml:"microshift,omitempty" doc:"MicroShift's own configuration: config.yaml merged into the plan, LVMS's lvmd.yaml and the StorageClasses of its device classes."`
	Bootc        Bootc          `toml:"bootc,omitempty" doc:"The bootc image: a Containerfile building the composition, its base image and how it gets the images."`
	Registry     DeviceRegistry `toml:"registry,omitempty" doc:"The device's registry access: the pull secret CRI-O reads, the mirror registry it pulls from first, and the mirror's CA."`
	Trust        Trust          `toml:"trust,omitempty" doc:"What the images must be signed with: a containers-policy.json, or sigstore public keys (build places them on the device; mirror checks the images against them)."`
	Installer    Installer      `toml:"installer,omitempty" doc:"How the composition is installed: the kickstart, bootc-image-builder's config, the payload, the device's user, disks, firewall and CA trust."`
	HealthChecks HealthChecks   `toml:"health_checks,omitempty" doc:"The greenboot check waiting for the workloads of the rendered manifests."`

	// Operators out of a file-based operator catalog image: the catalog,
	// and the packages, each a [[operators]] table.
	OperatorCatalog ImageSource `toml:"operator_catalog,omitempty" flag:"operator-catalog"`
	Operators       Operators   `toml:"operators,omitempty" flag:"operator"`
	Output          Output      `toml:"output,omitempty" doc:"Where build writes and what it adds to the lock."`
}

// MicroShift is MicroShift's own configuration.
type MicroShift struct {
	Config         FilePath       `toml:"config,omitempty" flag:"config"`
	Lvmd           FilePath       `toml:"lvmd,omitempty" flag:"lvmd"`
	StorageClasses StorageClasses `toml:"storage_classes,omitempty" flag:"storage-class"`
}

// Bootc is the bootc image build.
type Bootc struct {
	Enabled bool   `toml:"enabled,omitempty" flag:"bootc"`
	Base    string `toml:"base,omitempty" flag:"bootc-base"`
	Images  string `toml:"images,omitempty" flag:"bootc-images"`
	// RepoFiles are .repo files whose repositories the Containerfile
	// enables (microshift-io's RPMs).
	RepoFiles []FilePath `toml:"repo_files,omitempty" flag:"repo-file"`
}

// DeviceRegistry is how the device pulls its images.
type DeviceRegistry struct {
	PullSecret     FilePath `toml:"pull_secret,omitempty" flag:"pull-secret"`
	Mirror         string   `toml:"mirror,omitempty" flag:"mirror-registry"`
	MirrorCA       FilePath `toml:"mirror_ca,omitempty" flag:"mirror-ca"`
	MirrorInsecure bool     `toml:"mirror_insecure,omitempty" flag:"mirror-insecure"`
}

// Trust is what the images must be signed with.
type Trust struct {
	Policy FilePath   `toml:"policy,omitempty" flag:"policy"`
	Keys   []FilePath `toml:"keys,omitempty" flag:"verify-key"`
	// A signer's identity instead of keys: a keyless (Fulcio) certificate
	// logged in Rekor, or a certificate of the user's own PKI.
	CertificateIdentity   string   `toml:"certificate_identity,omitempty" flag:"certificate-identity"`
	CertificateOIDCIssuer string   `toml:"certificate_oidc_issuer,omitempty" flag:"certificate-oidc-issuer"`
	FulcioCA              FilePath `toml:"fulcio_ca,omitempty" flag:"fulcio-ca"`
	RekorKey              FilePath `toml:"rekor_key,omitempty" flag:"rekor-key"`
	CARoots               FilePath `toml:"ca_roots,omitempty" flag:"ca-roots"`
	CAIntermediates       FilePath `toml:"ca_intermediates,omitempty" flag:"ca-intermediates"`
}

// Installer is how the composition is installed on a device.
type Installer struct {
	Kickstart          bool        `toml:"kickstart,omitempty" flag:"kickstart"`
	BIB                bool        `toml:"bib,omitempty" flag:"bib"`
	OSTreeURL          string      `toml:"ostree_url,omitempty" flag:"ostree-url"`
	OSTreeRef          string      `toml:"ostree_ref,omitempty" flag:"ostree-ref"`
	BootcImage         string      `toml:"bootc_image,omitempty" flag:"bootc-image"`
	User               string      `toml:"user,omitempty" flag:"user"`
	SSHKey             FilePath    `toml:"ssh_key,omitempty" flag:"ssh-key"`
	Filesystems        Filesystems `toml:"filesystems,omitempty" flag:"filesystem"`
	DiskSize           string      `toml:"disk_size,omitempty" flag:"disk-size"`
	FirewallPorts      []string    `toml:"firewall_ports,omitempty" flag:"firewall-port"`
	CATrust            []FilePath  `toml:"ca_trust,omitempty" flag:"ca-trust"`
	InstallationDevice string      `toml:"installation_device,omitempty" flag:"installation-device"`
}

// HealthChecks is the greenboot check of the rendered workloads.
type HealthChecks struct {
	Disabled bool     `toml:"disabled,omitempty" flag:"no-health-checks"`
	Timeout  Duration `toml:"timeout,omitempty,omitzero" flag:"health-check-timeout"`
}

// Output is where build writes.
type Output struct {
	Dir          OutputPath `toml:"dir,omitempty" flag:"output" only:"build,matrix"`
	ResolveSizes bool       `toml:"resolve_sizes,omitempty" flag:"resolve-sizes"`
	SBOMFormats  []string   `toml:"sbom_formats,omitempty" flag:"sbom-format"`
}

// StorageClass is one --storage-class: the StorageClass of an lvmd device
// class. The jsonschema tags say checkTables' rule for the schema.
type StorageClass struct {
	DeviceClass string `toml:"device_class" jsonschema:"required,minLength=1,pattern=^[^\\,=]*$" doc:"The lvmd.yaml device class (CLASS of --storage-class)."`
	Name        string `toml:"name,omitempty" jsonschema:"pattern=^[^\\,=]*$" doc:"The StorageClass's name (default topolvm-provisioner-<class>)."`
	FSType      string `toml:"fstype,omitempty" jsonschema:"pattern=^[^\\,=]*$" doc:"The filesystem: xfs (default) or ext4."`
}

// StorageClasses are --storage-class values as tables.
type StorageClasses []StorageClass

// FlagValues are the classes as --storage-class takes them:
// CLASS[=NAME][,fstype=FS].
func (s StorageClasses) FlagValues() []string {
	var out []string
	for _, c := range s {
		v := c.DeviceClass
		if c.Name != "" {
			v += "=" + c.Name
		}
		if c.FSType != "" {
			v += ",fstype=" + c.FSType
		}
		out = append(out, v)
	}
	return out
}

// SetFlagValues sets the classes from --storage-class values; what they
// mean is checked where the flag's values are (lvmdconfig).
func (s *StorageClasses) SetFlagValues(values []string) error {
	out := StorageClasses{}
	for _, v := range values {
		parts := strings.Split(v, ",")
		var c StorageClass
		c.DeviceClass, c.Name, _ = strings.Cut(parts[0], "=")
		for _, opt := range parts[1:] {
			if fs, ok := strings.CutPrefix(opt, "fstype="); ok {
				c.FSType = fs
				continue
			}
			return fmt.Errorf("--storage-class %q: unknown option %q (want CLASS[=NAME][,fstype=FS])", v, opt)
		}
		out = append(out, c)
	}
	*s = out
	return nil
}

// Filesystem is one --filesystem: the minimum size of a mount point, as
// bootc-image-builder's config.toml names them. The jsonschema tags say
// checkTables' rule for the schema.
type Filesystem struct {
	Mountpoint string `toml:"mountpoint" jsonschema:"required,minLength=1,pattern=^[^=]*$" doc:"The mount point: / (the root logical volume), /boot, or another."`
	MinSize    string `toml:"minsize" jsonschema:"required,minLength=1" doc:"Its minimum size, as osbuild reads sizes: 20GiB, 512 MiB, 10GB."`
}

// Filesystems are --filesystem values as tables.
type Filesystems []Filesystem

// FlagValues are the filesystems as --filesystem takes them: MOUNT=SIZE.
func (s Filesystems) FlagValues() []string {
	var out []string
	for _, f := range s {
		out = append(out, f.Mountpoint+"="+f.MinSize)
	}
	return out
}

// SetFlagValues sets the filesystems from --filesystem values.
func (s *Filesystems) SetFlagValues(values []string) error {
	out := Filesystems{}
	for _, v := range values {
		mount, size, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("--filesystem %q: want MOUNT=SIZE", v)
		}
		out = append(out, Filesystem{Mountpoint: mount, MinSize: size})
	}
	*s = out
	return nil
}

// Duration is a duration as the file writes it and Go and the flags read
// it ("90s", "10m", "1h30m"), kept as written: a message about it, and the
// file build --print-file writes, say it as the user did. Its flag checks
// its value (positive, and its own bounds).
type Duration string

// ParseDuration reads a duration as a composition file's key and its flag
// take it, the one rule of both: time.ParseDuration's, with a message that
// quotes the value as written.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s is not a duration (e.g. 90s, 10m, 1h30m)", text.QuoteExcerpt(s))
	}
	return d, nil
}

// UnmarshalText checks a duration and keeps it as written.
func (d *Duration) UnmarshalText(b []byte) error {
	if _, err := ParseDuration(string(b)); err != nil {
		return err
	}
	*d = Duration(b)
	return nil
}

// MarshalText writes the duration as it was written.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d), nil }

// Operator is one --operator: a package of the operator catalog.
type Operator struct {
	Package   string `toml:"package" jsonschema:"required" doc:"The package, as the catalog's olm.package names it."`
	Channel   string `toml:"channel,omitempty" doc:"Its channel (default: the package's default channel)."`
	Versions  string `toml:"versions,omitempty" doc:"A version range, as OLM writes them (>=1.2.0 <2.0.0, or one version): the newest bundle of the channel in it (default: the channel's head)."`
	Approval  string `toml:"approval,omitempty" doc:"The Subscription's installPlanApproval: Automatic (default) or Manual."`
	Namespace string `toml:"namespace,omitempty" doc:"The namespace it is installed in (default: the one its CSV suggests, else the package's name)."`
}

// FlagValue is the operator as --operator takes it:
// PACKAGE[:CHANNEL][@RANGE][,approval=A][,namespace=NS].
func (o Operator) FlagValue() string {
	v := o.Package
	if o.Channel != "" {
		v += ":" + o.Channel
	}
	if o.Versions != "" {
		v += "@" + o.Versions
	}
	if o.Approval != "" {
		v += ",approval=" + o.Approval
	}
	if o.Namespace != "" {
		v += ",namespace=" + o.Namespace
	}
	return v
}

// OperatorSpelling is what SplitOperator saw of how a value was written
// besides its fields: a ':' or '@' written (with nothing after it, the
// field is empty), and an option given twice.
type OperatorSpelling struct {
	HasChannel, HasRange bool
	Twice                string
}

// SplitOperator splits an --operator value as FlagValue joins it, the one
// reading of the syntax (operators.ParseChoice checks what the fields
// mean): options after the last commas (approval=, namespace=), the first
// of an option given twice kept; a comma that starts no option belongs to
// the range (">=1.0.0, <2.0.0").
func SplitOperator(v string) (Operator, OperatorSpelling) {
	var o Operator
	var sp OperatorSpelling
	parts := strings.Split(v, ",")
	for len(parts) > 1 {
		key, value, ok := strings.Cut(strings.TrimSpace(parts[len(parts)-1]), "=")
		if !ok || (key != "approval" && key != "namespace") {
			break
		}
		field := &o.Approval
		if key == "namespace" {
			field = &o.Namespace
		}
		if *field != "" {
			sp.Twice = key
		}
		*field = value
		parts = parts[:len(parts)-1]
	}
	spec, versions, hasRange := strings.Cut(strings.Join(parts, ","), "@")
	pkg, channel, hasChannel := strings.Cut(spec, ":")
	o.Package, o.Channel, o.Versions = strings.TrimSpace(pkg), strings.TrimSpace(channel), strings.TrimSpace(versions)
	sp.HasChannel, sp.HasRange = hasChannel, hasRange
	return o, sp
}

// Operators are --operator values as tables.
type Operators []Operator

// FlagValues are the operators as --operator takes them (FlagValue).
func (s Operators) FlagValues() []string {
	var out []string
	for _, o := range s {
		out = append(out, o.FlagValue())
	}
	return out
}

// SetFlagValues sets the operators from --operator values (SplitOperator);
// what they mean is checked where the flag's values are
// (operators.ParseChoice).
func (s *Operators) SetFlagValues(values []string) error {
	out := Operators{}
	for _, v := range values {
		o, _ := SplitOperator(v)
		out = append(out, o)
	}
	*s = out
	return nil
}
