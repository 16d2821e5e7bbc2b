package trust

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Where the device reads its trust policy.
const (
	// PolicyPath is the containers policy podman, skopeo, CRI-O and bootc
	// evaluate before they pull an image.
	PolicyPath = "/etc/containers/policy.json"
	// SigstoreKeyDir holds the --verify-key public keys: <name>.pub.
	SigstoreKeyDir = "/etc/containers/sigstore"
	// RegistriesDPath tells containers/image to look for sigstore
	// signatures as attachments (sha256-<digest>.sig) for the plan's
	// repositories and the mirror registry.
	RegistriesDPath = "/etc/containers/registries.d/50-microshift-compose.yaml"
)

// Options are what the device checks images with.
type Options struct {
	// Policy is a containers-policy.json placed as it is.
	Policy string
	// Keys are PEM public keys placed in SigstoreKeyDir; without Policy,
	// the policy is generated from them: a sigstore signature by one of
	// them for every repository of the plan (matchRepository), the
	// bootc images directory accepted, everything else rejected.
	Keys []string
	// Identity is a certificate identity: the policy is generated from
	// it (a sigstoreSigned rule with fulcio or pki, as for Keys), and the
	// certificates and Rekor key it names are placed in SigstoreKeyDir.
	Identity sigverify.Identity
	// Mirror is the --mirror-registry (REGISTRY[/PREFIX]): the device reads
	// the signatures there too.
	Mirror string
	// OSImage is the bootc image the device runs and updates from (build
	// --bootc-image): with Keys, its repository requires a signature by
	// one of them too, so that `bootc upgrade` and `bootc switch` take a
	// signed OS image and refuse an unsigned one.
	OSImage string
}

// Add adds the trust policy, the keys and the registries.d entry
// to the plan's device files. The policy is the user's (parsed with
// containers/image first) or generated from the keys and parsed back.
func Add(p *plan.Plan, d Options) error {
	if d.Policy == "" && len(d.Keys) == 0 && !d.Identity.Enabled() {
		return nil
	}
	keys, err := sigverify.ReadKeys(d.Keys)
	if err != nil {
		return err
	}
	refs := p.ImageRefs()
	if d.OSImage != "" {
		refs = append(refs, d.OSImage)
	}
	scopes, err := sigverify.Scopes(refs)
	if err != nil {
		return err
	}
	var files []plan.File
	if d.Policy != "" {
		t, err := sigverify.ParsePolicy(d.Policy)
		if err != nil {
			return err
		}
		// The policy is the device's: the files it names are the
		// device's, checked here where this build places them (the keys)
		// or this machine has them (a named pipe or a private key is
		// refused as it would be for mirror).
		placed := map[string][]byte{}
		for _, k := range keys {
			placed[DeviceKeyPath(k)] = k.Data
		}
		missing, err := sigverify.CheckDevicePolicy(t, d.Policy, placed)
		if err != nil {
			return err
		}
		for _, f := range missing {
			p.Warnings = append(p.Warnings, fmt.Sprintf("policy %s: %s names %s, which this build does not place (--verify-key) nor this machine has: the device must hold it, or its rule refuses every image", d.Policy, f.Field, f.Path))
		}
		files = append(files, plan.File{Path: PolicyPath, Mode: "0644", Source: "--policy " + d.Policy, Data: t.JSON})
	} else if d.Identity.Enabled() {
		idFiles, err := sigverify.ReadIdentityFiles(d.Identity)
		if err != nil {
			return err
		}
		devicePath := func(f sigverify.IdentityFile) string { return f.DevicePath(SigstoreKeyDir) }
		t, err := sigverify.IdentityTrust(d.Identity, idFiles, scopes, devicePath, sigverify.Scope{Transport: "dir", Scope: output.BootcImagesPath})
		if err != nil {
			return err
		}
		files = append(files, plan.File{Path: PolicyPath, Mode: "0644", Source: "--certificate-identity " + d.Identity.Subject, Data: t.JSON})
		for _, f := range idFiles {
			files = append(files, plan.File{Path: devicePath(f), Mode: "0644", Source: f.Flag + " " + f.Path, Data: f.Data})
		}
	} else {
		t, err := sigverify.KeyTrust(keys, scopes, DeviceKeyPath, sigverify.Scope{Transport: "dir", Scope: output.BootcImagesPath})
		if err != nil {
			return err
		}
		files = append(files, plan.File{Path: PolicyPath, Mode: "0644", Source: t.Source, Data: t.JSON})
	}
	for _, k := range keys {
		files = append(files, plan.File{Path: DeviceKeyPath(k), Mode: "0644", Source: "--verify-key " + k.Path, Data: k.Data})
	}
	attach := scopes
	if d.Mirror != "" {
		host, prefix, err := airgap.ParseRegistryPrefix(strings.TrimSuffix(strings.TrimPrefix(d.Mirror, "docker://"), "/"))
		if err != nil {
			return fmt.Errorf("--mirror-registry %q: %w", d.Mirror, err)
		}
		attach = append(attach, strings.TrimSuffix(host+"/"+prefix, "/"))
	}
	conf, err := RegistriesD(attach)
	if err != nil {
		return err
	}
	source := "--verify-key"
	switch {
	case d.Policy != "":
		source = "--policy"
	case d.Identity.Enabled():
		source = "--certificate-identity"
	}
	files = append(files, plan.File{Path: RegistriesDPath, Mode: "0644", Source: source, Data: conf})
	if ops := p.Operators; ops != nil {
		// Build made the filtered catalog: no one has signed it.
		repo, _, _ := strings.Cut(ops.Filtered.Ref, "@")
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the filtered operator catalog %s is built here, so no one has signed it, and the device's policy checks the signatures of %s: sign it with a key the policy trusts (cosign sign --key KEY) once mirror has put it in the site registry, or the CatalogSource's pod cannot pull it", source, ops.Filtered.Ref, repo))
	}
	return p.AddDeviceFiles(files)
}

// DeviceKeyPath is where a key is placed on the device.
func DeviceKeyPath(k sigverify.Key) string { return SigstoreKeyDir + "/" + k.Name + ".pub" }

// RegistriesD is a registries.d file turning sigstore attachments on for
// each scope (a registry, a namespace or a repository), keys sorted.
func RegistriesD(scopes []string) ([]byte, error) {
	if len(scopes) == 0 {
		return nil, errors.New("no registries to configure")
	}
	docker := map[string]map[string]bool{}
	for _, s := range scopes {
		docker[s] = map[string]bool{"use-sigstore-attachments": true}
	}
	data, err := yaml.Marshal(map[string]any{"docker": docker})
	if err != nil {
		return nil, fmt.Errorf("encoding registries.d: %w", err)
	}
	head := "# Sigstore signatures of the plan's images are attachments (sha256-<digest>.sig)\n# in their repositories. Generated by microshift-compose; do not edit.\n"
	return append([]byte(head), data...), nil
}
