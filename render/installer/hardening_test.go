package installer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/render/installer"
)

// hardened adds FIPS mode's fips=1 and user kernel arguments, and RHEL 9's
// FIPS %post (MicroShift's post-fips.cfg), to o.
func hardened(o installer.KickstartOptions) installer.KickstartOptions {
	o.KernelArgs = []string{"fips=1", "console=ttyS0,115200n8", "ip=[fd00::2]::[fd00::1]:64::eth0:none", "audit=1"}
	o.OSTreePost = []string{"fips-mode-setup --enable --no-bootcfg"}
	return o
}

// TestKickstartHardeningGolden: the kernel command line reaches the
// installed system on bootloader's --append, quoted for pykickstart, and
// fips-mode-setup runs in %post for an ostree commit (as MicroShift's
// post-fips.cfg does) but never for a bootc image; ksvalidator takes them.
func TestKickstartHardeningGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     installer.KickstartOptions
		wantPost bool
	}{
		{"ostree-hardening.ks", hardened(installer.KickstartOptions{Payload: ostreePayload}), true},
		{"bootc-hardening.ks", hardened(installer.KickstartOptions{Payload: bootcPayload}), false},
		{"body-hardening.ks", hardened(installer.KickstartOptions{}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ks, err := installer.Kickstart(testPlan(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := installer.Kickstart(testPlan(), tc.opts)
			if !bytes.Equal(ks, again) {
				t.Fatal("two kickstarts of the same inputs differ")
			}
			s := string(ks)
			want := `bootloader --append="fips=1 console=ttyS0,115200n8 ip=[fd00::2]::[fd00::1]:64::eth0:none audit=1"` + "\n"
			if strings.Count(s, want) != 1 || strings.Count(s, "bootloader") != 1 {
				t.Errorf("want one %q:\n%s", want, s)
			}
			if got := strings.Contains(s, "\nfips-mode-setup --enable --no-bootcfg\n"); got != tc.wantPost {
				t.Errorf("fips-mode-setup in %%post: %v, want %v:\n%s", got, tc.wantPost, s)
			}
			checkSections(t, ks)
			golden(t, tc.name, ks)
			ksvalidate(t, ks)
		})
	}
}

// TestKickstartHostileKernelArgs: the writer checks what it is given,
// whoever checked it before: an argument that would end the quoted
// --append, add an option or a kickstart line is refused, with one line
// and no kickstart.
func TestKickstartHostileKernelArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		post []string
		err  string
	}{
		{"newline", []string{"quiet\n%post\nreboot"}, nil, `kernel argument "quiet\n%post\nreboot" holds a character`},
		{"quote", []string{`quiet" --location=none "`}, nil, "holds a character the kernel command line cannot carry"},
		{"space", []string{"quiet splash"}, nil, "holds a character"},
		{"backslash", []string{`a=b\`}, nil, "holds a character"},
		{"empty", []string{""}, nil, "holds a character"},
		{"unicode line separator", []string{"a=\u2028b"}, nil, "holds a character"},
		{"post newline", []string{"fips=1"}, []string{"fips-mode-setup --enable\n%end\nrootpw x"}, "%post command"},
		{"post percent", []string{"fips=1"}, []string{"%end"}, "%post command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := installer.Kickstart(testPlan(), installer.KickstartOptions{Payload: ostreePayload, KernelArgs: tc.args, OSTreePost: tc.post})
			if err == nil || ks != nil || !strings.Contains(err.Error(), tc.err) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Kickstart(%q, %q) = %d bytes, %v; want no kickstart and one line containing %q", tc.args, tc.post, len(ks), err, tc.err)
			}
		})
	}
}
