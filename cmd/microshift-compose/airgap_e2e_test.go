package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/microshift-compose/microshift-compose/render/registry"
)

// TestTwoHopAirgap is the disconnected flow end to end, with real parts:
// build (pull secret, mirror registry and its CA for the device) -> mirror
// the images from a TLS+htpasswd registry into one file -> with the source
// registry gone, load the file into an empty TLS+htpasswd registry -> the
// device's registries.conf.d drop-in, parsed with containers/image,
// resolves every image of images.txt to the mirror, and skopeo and podman,
// configured as the device is (that drop-in, the blueprint's pull secret,
// the mirror CA build wrote), pull the images by their source references.
func TestTwoHopAirgap(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	skopeoBin := needTool(t, "skopeo", "skopeo")
	podmanBin := needTool(t, "podman", "podman")
	src := newSecureRegistry(t, "robot", "source-pass", true)
	// The mirror's password is the planted one: it must reach the device
	// through the blueprint and nowhere else.
	dst := newSecureRegistry(t, "edge", planted, false)
	mirrorLoc := dst.Host + "/microshift"

	e := newUserEnv(t)
	e.trust(t, src.CA, src.Host) // the connected side trusts the source
	work := t.TempDir()
	out := filepath.Join(work, "out")
	srcAuth := filepath.Join(work, "source-auth.json")
	writeFileMode(t, srcAuth, authJSON("robot", "source-pass", src.Host), 0o600)
	pullSecret := filepath.Join(work, "pull-secret.json")
	writeFileMode(t, pullSecret, authJSON("edge", planted, dst.Host), 0o600)
	caFile := filepath.Join(work, "mirror-ca.crt")
	writeFileMode(t, caFile, dst.CA.PEM, 0o644)
	var outputs []string
	must := func(args ...string) string {
		t.Helper()
		r := e.exec(t, "", bin, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		if r.code != 0 {
			t.Fatalf("microshift-compose %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}

	// 1. Build, with the device's registry configuration.
	must("build", "--profile", "full", "--arch", "x86_64", "--release-dir", src.release, "--bootc",
		"--pull-secret", pullSecret, "--mirror-registry", mirrorLoc, "--mirror-ca", caFile, "--output", out)
	refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	if len(refs) != 9 {
		t.Fatalf("images.txt has %d images, want 9", len(refs))
	}

	// 2. The connected side: every image into one file.
	bundle := filepath.Join(work, "microshift-images.tar")
	must("mirror", "--lock", filepath.Join(out, "compose.lock.json"), "--authfile", srcAuth, "--quiet", "--to", "oci-archive:"+bundle)

	// 3. The disconnected side: the source is gone; the file goes into the
	// mirror, shared base layers uploaded once and mounted elsewhere.
	src.Stop()
	e2 := newUserEnv(t)
	e2.trust(t, dst.CA, dst.Host)
	mirrorAuth := filepath.Join(work, "mirror-auth.json")
	writeFileMode(t, mirrorAuth, authJSON("edge", planted, dst.Host), 0o600)
	r := e2.exec(t, "", bin, "mirror", "--from", "oci-archive:"+bundle, "--authfile", mirrorAuth, "--quiet", "--to", "docker://"+mirrorLoc)
	outputs = append(outputs, r.stdout, r.stderr)
	summary := regexp.MustCompile(`^mirrored 9 images \(\d+ blobs, \d+ manifests\) to docker://` + regexp.QuoteMeta(mirrorLoc) + `: [0-9.]+ [KM]iB uploaded in \d+ blobs, [0-9.]+ [KM]iB mounted from other repositories in [1-9]\d* blobs?, 0 B already present, in [0-9.]+s\n$`)
	if r.code != 0 || !summary.MatchString(r.stdout) {
		t.Fatalf("mirror --from the archive: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}

	// 4. The device's drop-in, parsed with containers/image: every image
	// resolves to the mirror first.
	confDir := filepath.Join(out, "files", "etc", "containers", "registries.conf.d")
	conf := filepath.Join(confDir, filepath.Base(registry.MirrorConfPath))
	emptyMain := filepath.Join(work, "registries.conf")
	writeFileMode(t, emptyMain, nil, 0o644)
	resolved, err := registry.ResolveThroughRegistriesConf(emptyMain, confDir, refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		want := mirrorLoc + strings.TrimPrefix(ref, src.Host)
		if resolved[ref] != want {
			t.Errorf("%s resolves to %s, want %s", ref, resolved[ref], want)
		}
	}

	// 5. Configured as the device is: the drop-in as registries.conf, the
	// pull secret the blueprint carries, the CA build wrote for certs.d.
	deviceSecret := filepath.Join(work, "device-pull-secret.json")
	writeFileMode(t, deviceSecret, blueprintFile(t, filepath.Join(out, "blueprint.toml"), registry.PullSecretPath), 0o600)
	certDir := filepath.Join(out, "files", "etc", "containers", "certs.d", dst.Host)
	device := newUserEnv(t)
	for _, ref := range refs {
		raw := device.must(t, skopeoBin, "--registries-conf", conf, "inspect", "--raw", "--authfile", deviceSecret, "--cert-dir", certDir, "docker://"+ref)
		sum := sha256.Sum256([]byte(raw))
		if !strings.HasSuffix(ref, "@sha256:"+hex.EncodeToString(sum[:])) {
			t.Errorf("skopeo through the drop-in read %s with digest %x", ref, sum)
		}
	}
	// podman pulls two of them (a manifest list and an image) into a
	// scratch store, by their source references, the source being down.
	device.set("CONTAINERS_REGISTRIES_CONF", conf)
	store := t.TempDir()
	for _, ref := range refs[:2] {
		device.must(t, podmanBin, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs",
			"pull", "--quiet", "--authfile", deviceSecret, "--cert-dir", certDir, ref)
	}

	// The planted password: in the blueprint (base64, as auth files hold
	// it), nowhere else in the output, and never on stdout or stderr.
	noSecret(t, "command output", outputs...)
	enc := base64.StdEncoding.EncodeToString([]byte("edge:" + planted))
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		has := strings.Contains(string(data), enc) || strings.Contains(string(data), planted)
		if rel, _ := filepath.Rel(out, p); rel == "blueprint.toml" {
			if !has {
				t.Errorf("blueprint.toml lacks the pull secret")
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
				t.Errorf("blueprint.toml with a pull secret has mode %v, want 0600", st.Mode().Perm())
			}
		} else if has {
			t.Errorf("%s holds the pull secret", rel)
		}
		return nil
	})
}

// blueprintFile is the content of a [[customizations.files]] entry.
func blueprintFile(t *testing.T, path, devicePath string) []byte {
	t.Helper()
	var bp struct {
		Customizations struct {
			Files []struct{ Path, Data, Mode string }
		}
	}
	if _, err := toml.DecodeFile(path, &bp); err != nil {
		t.Fatal(err)
	}
	for _, f := range bp.Customizations.Files {
		if f.Path == devicePath {
			if f.Mode != "0600" {
				t.Errorf("blueprint file %s has mode %s, want 0600", devicePath, f.Mode)
			}
			return []byte(f.Data)
		}
	}
	t.Fatalf("blueprint %s has no file %s", path, devicePath)
	return nil
}
