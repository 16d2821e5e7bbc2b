package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// idRequest is the request as the composition ID sees it: what changes the
// outputs, normalised (lists sorted and unique, files by content). Flags
// that only decide whether a build is refused (--allow-unpinned,
// --allow-red-boot, --exact-version, --strict-release) and the plugin
// timeout are left out: when a build succeeds, they have not changed a
// byte of it.
type idRequest struct {
	Profile     string   `json:"profile"`
	With        []string `json:"with"`
	Without     []string `json:"without"`
	Arch        string   `json:"arch"`
	Distro      string   `json:"distro,omitempty"`
	BootcBase   string   `json:"bootc_base,omitempty"`
	UpgradeFrom string   `json:"upgrade_from,omitempty"`
	// Config is the digest of the user's config.yaml as parsed (its
	// values, not its comments: they go no further); Lvmd the digest of
	// the lvmd.yaml bytes, which land on the device unchanged.
	Config string `json:"config,omitempty"`
	Lvmd   string `json:"lvmd,omitempty"`
	// StorageClasses are the --storage-class choices, by class.
	StorageClasses []idStorageClass `json:"storage_classes,omitempty"`
	// HealthCheck is the greenboot check's options when not the default.
	HealthCheck *idHealthCheck `json:"health_check,omitempty"`
	// FIPS, KernelArgs (in order: the kernel reads them in order) and CIS
	// (the profile ID, however --cis named it) are the hardening.
	FIPS       bool     `json:"fips,omitempty"`
	KernelArgs []string `json:"kernel_args,omitempty"`
	CIS        string   `json:"cis,omitempty"`
	// RepoFiles are the digests of the --repo-file files, in order.
	RepoFiles []string `json:"repo_files,omitempty"`
	// Operators are the operators asked for and the catalog they come
	// from, by the digest of its manifest for the arch (its content, not
	// where it was read).
	Operators *idOperators `json:"operators,omitempty"`
}

type idOperators struct {
	Catalog string             `json:"catalog"`
	Choices []operators.Choice `json:"choices"`
}

type idStorageClass struct {
	Class  string `json:"class"`
	Name   string `json:"name,omitempty"`
	FSType string `json:"fstype,omitempty"`
}

type idHealthCheck struct {
	Disabled bool  `json:"disabled,omitempty"`
	Timeout  int64 `json:"timeout_seconds,omitempty"`
}

// setInputs records what p was resolved from and its composition ID.
// The distro and bootc base are the plan's target's: a flag naming the
// default is no change.
func setInputs(p *plan.Plan, catalogDigest string, rel *releases.Release, know string, req Request) error {
	r := idRequest{
		Profile: req.Profile, With: sortedUnique(req.With), Without: sortedUnique(req.Without),
		Arch: string(req.Arch), Distro: p.Target.Distro, BootcBase: p.Target.BootcBase,
	}
	if r.With == nil {
		r.With = []string{}
	}
	if r.Without == nil {
		r.Without = []string{}
	}
	if req.UpgradeFrom != nil {
		r.UpgradeFrom = req.UpgradeFrom.String()
	}
	if req.Config != nil {
		data, err := json.Marshal(req.Config.Tree)
		if err != nil {
			return fmt.Errorf("encoding %s for the composition ID: %w", req.Config.Source, err)
		}
		r.Config = digest(data)
	}
	if req.Lvmd != nil {
		r.Lvmd = digest(req.Lvmd.Data)
	}
	for _, c := range req.StorageClasses {
		r.StorageClasses = append(r.StorageClasses, idStorageClass{Class: c.Class, Name: c.Name, FSType: c.FSType})
	}
	slices.SortStableFunc(r.StorageClasses, func(a, b idStorageClass) int { return strings.Compare(a.Class, b.Class) })
	if h := req.HealthCheck; h.Disabled || h.Timeout != 0 {
		r.HealthCheck = &idHealthCheck{Disabled: h.Disabled, Timeout: int64(h.Timeout / time.Second)}
	}
	for _, f := range req.RepoFiles {
		r.RepoFiles = append(r.RepoFiles, digest(f.Data))
	}
	if h := p.Hardening; h != nil {
		r.FIPS, r.KernelArgs = h.FIPSOn(), h.KernelArgs
		if h.CIS != nil {
			r.CIS = h.CIS.Profile
		}
	}
	if o := req.Operators; o != nil {
		choices := slices.Clone(o.Choices)
		for i := range choices {
			if choices[i].Approval == operators.ApprovalAutomatic {
				choices[i].Approval = "" // the default
			}
		}
		slices.SortFunc(choices, func(a, b operators.Choice) int { return strings.Compare(a.Package, b.Package) })
		r.Operators = &idOperators{Catalog: o.Catalog.Image.ManifestHash.String(), Choices: choices}
	}
	return p.SetInputs(&plan.Inputs{IDSchema: plan.IDSchema, Request: r, Catalog: catalogDigest, Release: releaseDigest(rel), Knowledge: know})
}

// releaseDigest hashes the release files by name and content (each file as
// Encode writes it: the parsed content, not its whitespace), not by where
// they were read from: an embedded release and the same files in a
// directory are one release.
func releaseDigest(rel *releases.Release) string {
	h := sha256.New()
	for _, f := range rel.Files() {
		data := f.Encode()
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
