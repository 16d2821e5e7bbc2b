package sigverify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/image"
	"github.com/containers/image/v5/signature"
	"github.com/containers/image/v5/types"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// ErrRefused is wrapped by the error of an image the policy refuses.
var ErrRefused = errors.New("refused by the trust policy")

// Result is the verdict on one image.
type Result struct {
	Ref string
	// Rule is the policy rule that decided: `docker "SCOPE" (TYPES)` or
	// `default (TYPES)`.
	Rule string
	// Err is nil when the policy accepts the image.
	Err error
}

// RegistriesD is the registries.d configuration signatures are looked up
// with: sigstore attachments for every registry, as cosign stores them.
const RegistriesD = "default-docker:\n  use-sigstore-attachments: true\n"

// Verify evaluates the trust policy for every image of refs (by digest),
// concurrently (Registry.Jobs), with containers/image's docker transport
// and signature.PolicyContext: the manifest is read (through registries.conf
// mirrors, as podman reads it) and checked against the digest, and the
// sigstore attachments of the image are checked against the rule the
// policy has for its repository. Registry access follows reg (auth file,
// registries.conf, certificate directory; insecure and loopback registries
// without TLS verification); each image is bounded by reg's timeout times
// its attempts. Results come back in refs' order; the error is set only
// when verification could not run.
func Verify(ctx context.Context, t *Trust, refs []string, reg registryclient.Options) ([]Result, error) {
	dir := t.RegistriesDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "microshift-compose-registries.d-")
		if err != nil {
			return nil, fmt.Errorf("creating the registries.d directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		if err := os.WriteFile(filepath.Join(tmp, "sigstore-attachments.yaml"), []byte(RegistriesD), 0o600); err != nil {
			return nil, fmt.Errorf("writing the registries.d configuration: %w", err)
		}
		dir = tmp
	}
	results := make([]Result, len(refs))
	g, gctx := errgroup.WithContext(ctx)
	jobs := reg.Jobs
	if jobs <= 0 {
		jobs = registryclient.DefaultJobs
	}
	g.SetLimit(jobs)
	for i, ref := range refs {
		results[i].Ref = ref
		g.Go(func() error {
			results[i].Rule, results[i].Err = verifyOne(gctx, t, ref, reg, dir)
			return nil
		})
	}
	_ = g.Wait() // results hold their own errors
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("verifying signatures: %w", err)
	}
	return results, nil
}

// Refused lists the results the policy refused.
func Refused(results []Result) []Result {
	var bad []Result
	for _, r := range results {
		if r.Err != nil {
			bad = append(bad, r)
		}
	}
	return bad
}

func verifyOne(ctx context.Context, t *Trust, ref string, reg registryclient.Options, registriesD string) (rule string, err error) {
	dref, err := docker.ParseReference("//" + ref)
	if err != nil {
		return "", fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	rule = RuleFor(t.Policy, dref)
	timeout := reg.Timeout
	if timeout <= 0 {
		timeout = registryclient.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout*time.Duration(reg.Attempts()))
	defer cancel()
	sys := reg.SystemContext()
	sys.RegistriesDirPath = registriesD
	sys.DockerRegistryUserAgent = reg.UserAgent
	if reg.AllowsInsecure(reference.Domain(dref.DockerReference())) {
		sys.DockerInsecureSkipTLSVerify = types.OptionalBoolTrue
	}
	pc, err := signature.NewPolicyContext(t.Policy)
	if err != nil {
		return rule, fmt.Errorf("preparing the policy: %w", err)
	}
	defer pc.Destroy()
	src, err := dref.NewImageSource(ctx, sys)
	if err != nil {
		return rule, fmt.Errorf("reading the image: %s", oneLine(err.Error()))
	}
	defer src.Close()
	ok, err := pc.IsRunningImageAllowed(ctx, image.UnparsedInstance(src, nil))
	if !ok {
		msg := "not allowed"
		if err != nil {
			msg = oneLine(err.Error())
		}
		return rule, fmt.Errorf("%w: rule %s: %s", ErrRefused, rule, msg)
	}
	return rule, nil
}

// RuleFor names the policy rule containers/image applies to ref: the most
// specific scope of its transport (the image itself, its repository, then
// each enclosing namespace), else the transport's default scope (""), else
// the policy default; with the requirement types.
func RuleFor(p *signature.Policy, ref types.ImageReference) string {
	name := ref.Transport().Name()
	if scopes, ok := p.Transports[name]; ok {
		cands := append([]string{ref.PolicyConfigurationIdentity()}, ref.PolicyConfigurationNamespaces()...)
		for _, c := range cands {
			if reqs, ok := scopes[c]; ok {
				return fmt.Sprintf("%s %q (%s)", name, c, reqTypes(reqs))
			}
		}
		if reqs, ok := scopes[""]; ok {
			return fmt.Sprintf("%s default (%s)", name, reqTypes(reqs))
		}
	}
	return fmt.Sprintf("default (%s)", reqTypes(p.Default))
}

// reqTypes lists the requirement types ("sigstoreSigned", "reject", …).
func reqTypes(reqs signature.PolicyRequirements) string {
	var names []string
	for _, r := range reqs {
		var c struct {
			Type string `json:"type"`
		}
		if data, err := json.Marshal(r); err == nil && json.Unmarshal(data, &c) == nil {
			names = append(names, c.Type)
		}
	}
	return strings.Join(names, ", ")
}
