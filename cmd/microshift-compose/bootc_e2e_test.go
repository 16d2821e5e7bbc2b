package main

import (
	"archive/tar"
	"bytes"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBootcImageBuild builds build --bootc's Containerfile with the real
// podman, in both image modes, on a test base image that carries this
// machine's skopeo (Debian's 1.9.3, the oldest available: older than the
// containers/image 5.35 that reads Docker-typed manifests out of an OCI
// layout) and stand-ins for dnf, systemctl and firewall-offline-cmd. Then
// it runs what the device runs before MicroShift starts, the image loader,
// and checks every image is in container storage under its digest, and the
// pull secret is where CRI-O reads it, 0600.
func TestBootcImageBuild(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	podmanBin := needTool(t, "podman", "podman")
	skopeoBin := needTool(t, "skopeo", "skopeo")
	const user, password = "robot", "bootc-pass"
	src := newSecureRegistry(t, user, password, true)
	pm := newPodman(t, podmanBin)
	base := pm.testBase(t, skopeoBin, src)

	for _, mode := range []string{"mirror", "pull"} {
		t.Run(mode, func(t *testing.T) {
			e := newUserEnv(t)
			e.trust(t, src.CA, src.Host)
			work := t.TempDir()
			out := filepath.Join(work, "out")
			ps := filepath.Join(work, "pull-secret.json")
			writeFileMode(t, ps, authJSON(user, password, src.Host), 0o600)
			e.must(t, bin, "build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", src.release,
				"--bootc", "--bootc-images", mode, "--pull-secret", ps, "--output", out)
			if mode == "mirror" {
				e.must(t, bin, "mirror", "--lock", filepath.Join(out, "compose.lock.json"), "--authfile", ps, "--quiet", "--to", "dir:"+filepath.Join(out, "images"))
			}
			cf := string(mustReadFile(t, filepath.Join(out, "Containerfile")))
			if !strings.Contains(cf, "--secret id=pullsecret,src=pull-secret.json") {
				t.Errorf("the Containerfile does not say how to pass the pull secret:\n%s", cf)
			}
			image, buildLog := pm.buildTagged(t, out, filepath.Join(out, "Containerfile"), base, ps)
			if !strings.Contains(buildLog, "(test base) /usr/bin/bootc container lint") {
				t.Errorf("the image build did not end with bootc container lint:\n%s", buildLog)
			}

			// What the device does before MicroShift starts, then the check.
			refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
			verify := t.TempDir()
			script := `set -eu
/usr/libexec/microshift-compose-load-images
while read -r ref; do
    [ -n "${ref}" ] || continue
    echo "loaded ${ref} $(skopeo inspect --raw "containers-storage:${ref}" | sha256sum | cut -d' ' -f1)"
done < /usr/lib/microshift-compose/images.txt
echo "pull secret mode $(stat -c %a /etc/crio/openshift-pull-secret)"
cat /etc/crio/openshift-pull-secret | sha256sum
`
			writeFileMode(t, filepath.Join(verify, "verify.sh"), []byte(script), 0o755)
			writeFileMode(t, filepath.Join(verify, "Containerfile"), []byte("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY verify.sh /verify.sh\nRUN /verify.sh\n"), 0o644)
			log := pm.buildLog(t, verify, filepath.Join(verify, "Containerfile"), image, "")
			for _, ref := range refs {
				if !regexp.MustCompile(`(?m)^loaded ` + regexp.QuoteMeta(ref) + ` [0-9a-f]{64}$`).MatchString(log) {
					t.Errorf("%s is not in container storage after the loader ran:\n%s", ref, log)
				}
			}
			if !strings.Contains(log, "pull secret mode 600") {
				t.Errorf("/etc/crio/openshift-pull-secret is not 0600:\n%s", log)
			}
			if !strings.Contains(log, sha256Hex(mustReadFile(t, ps))) {
				t.Errorf("/etc/crio/openshift-pull-secret is not the pull secret")
			}
			noSecret(t, "the build log", log)
		})
	}
}

// podman runs podman on a scratch store in the test's temporary directory,
// with chroot isolation, which needs no OCI runtime or cgroups.
type podman struct {
	bin, root string
}

func newPodman(t *testing.T, bin string) *podman {
	return &podman{bin: bin, root: t.TempDir()}
}

func (p *podman) cmd(args ...string) *exec.Cmd {
	full := append([]string{"--root", filepath.Join(p.root, "root"), "--runroot", filepath.Join(p.root, "run"), "--storage-driver", "overlay"}, args...)
	cmd := exec.Command(p.bin, full...)
	cmd.Env = append(os.Environ(), "BUILDAH_ISOLATION=chroot")
	return cmd
}

func (p *podman) run(t *testing.T, stdin io.Reader, args ...string) string {
	t.Helper()
	cmd := p.cmd(args...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// imageSeq numbers the images built: tests that build run in parallel.
var imageSeq atomic.Int64

// buildLog builds a Containerfile with the pull secret as a build secret
// (when given) and returns the build's output.
func (p *podman) buildLog(t *testing.T, context, containerfile, base, secret string) string {
	t.Helper()
	_, log := p.buildTagged(t, context, containerfile, base, secret)
	return log
}

// buildTagged builds as buildLog does and returns the image's tag too.
func (p *podman) buildTagged(t *testing.T, context, containerfile, base, secret string) (tag, log string) {
	t.Helper()
	args := []string{"build", "--isolation", "chroot", "--cap-add", "all", "--network", "host", "--build-arg", "BASE_IMAGE=" + base}
	if secret != "" {
		args = append(args, "--secret", "id=pullsecret,src="+secret)
	}
	tag = "localhost/microshift-compose-test:" + strconv.FormatInt(imageSeq.Add(1), 10)
	args = append(args, "-t", tag, "-f", containerfile, context)
	return tag, p.run(t, nil, args...)
}

// testBase imports a base image made of this machine's programs: bash,
// the coreutils the Containerfile uses, skopeo and its libraries, the
// containers policy, vfs storage, and the source registry's CA; dnf,
// systemctl and firewall-offline-cmd do nothing.
// extra files (path -> content, mode 0755) replace the base's own, such as
// a stand-in dnf that shows what it was given.
func (p *podman) testBase(t *testing.T, skopeoBin string, src *secureRegistry, extra ...map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	dir := func(name string) {
		for d := filepath.Dir(name); d != "." && d != "/" && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			defer tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755})
		}
	}
	add := func(name string, data []byte, mode int64) {
		if seen[name] {
			return
		}
		dir(name)
		seen[name] = true
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(name, "/"), Mode: mode, Size: int64(len(data))})
		tw.Write(data)
	}
	copyProgram := func(path string) {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			t.Fatalf("test base image: %v", err)
		}
		data, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		add(path, data, 0o755)
		out, _ := exec.Command("ldd", real).Output()
		for _, lib := range regexp.MustCompile(`(/\S+\.so[.\d]*)`).FindAllString(string(out), -1) {
			if ld, err := filepath.EvalSymlinks(lib); err == nil {
				if data, err := os.ReadFile(ld); err == nil {
					add(lib, data, 0o755)
				}
			}
		}
	}
	for _, prog := range []string{"bash", "sh", "cat", "sha256sum", "cut", "mkdir", "chmod", "install", "stat", "head", "rm"} {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("test base image: %v", err)
		}
		copyProgram(path)
		copyProgram("/usr/bin/" + prog)
	}
	for _, sh := range []string{"/bin/sh", "/bin/bash"} {
		copyProgram(sh)
	}
	copyProgram(skopeoBin)
	if data, err := os.ReadFile("/lib/x86_64-linux-gnu/libnss_files.so.2"); err == nil {
		add("/lib/x86_64-linux-gnu/libnss_files.so.2", data, 0o755)
	}
	for _, files := range extra {
		for _, path := range slices.Sorted(maps.Keys(files)) {
			add(path, files[path], 0o755)
		}
	}
	for _, fake := range []string{"dnf", "systemctl", "firewall-offline-cmd", "bootc"} {
		add("/usr/bin/"+fake, []byte("#!/bin/sh\necho \"(test base) $0 $*\"\n"), 0o755)
	}
	policy, err := os.ReadFile("/etc/containers/policy.json")
	if err != nil {
		policy = []byte(`{"default": [{"type": "insecureAcceptAnything"}]}`)
	}
	add("/etc/containers/policy.json", policy, 0o644)
	add("/etc/containers/storage.conf", []byte("[storage]\ndriver = \"vfs\"\nrunroot = \"/run/containers/storage\"\ngraphroot = \"/var/lib/containers/storage\"\n"), 0o644)
	add("/etc/containers/certs.d/"+src.Host+"/ca.crt", src.CA.PEM, 0o644)
	add("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	add("/etc/group", []byte("root:x:0:\n"), 0o644)
	for _, d := range []string{"/tmp/", "/var/tmp/", "/root/", "/run/"} {
		seen[d] = true
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/"), Mode: 0o1777})
	}
	tw.Close()
	const name = "localhost/microshift-compose-test-base:latest"
	p.run(t, &buf, "import", "-", name)
	return name
}
