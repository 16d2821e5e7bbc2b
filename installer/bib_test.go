package installer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/microshift-compose/microshift-compose/installer"
)

func TestBIBConfig(t *testing.T) {
	user := &installer.User{Name: "admin", Keys: []string{testKey}}
	fss := []installer.Filesystem{{Mount: "/", MinSize: 20 << 30}, {Mount: "/var/lib/data", MinSize: 5 << 30}}
	body, err := installer.Kickstart(testPlan(), allOptions(installer.Payload{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts installer.BIBOptions
	}{
		{"config-disk.toml", installer.BIBOptions{User: user, Filesystems: fss}},
		{"config-anaconda-iso.toml", installer.BIBOptions{User: user, Filesystems: fss, Kickstart: body}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := installer.EncodeBIBConfig(testPlan(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, data)
			// bootc-image-builder decodes it into osbuild's blueprint
			// customizations: strictly, every key known.
			var cfg installer.BIBConfig
			md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
			if err != nil {
				t.Fatalf("decoding %s: %v", tc.name, err)
			}
			if und := md.Undecoded(); len(und) > 0 {
				t.Fatalf("%s has keys the blueprint does not know: %v", tc.name, und)
			}
			c := cfg.Customizations
			if tc.opts.Kickstart != nil {
				if c.Installer == nil || c.Installer.Kickstart == nil || c.Installer.Kickstart.Contents != string(body) || c.User != nil {
					t.Fatalf("anaconda-iso config: want the kickstart and no user (bootc-image-builder refuses both), got %+v", c)
				}
				if strings.Contains(c.Installer.Kickstart.Contents, "\nostreecontainer ") || strings.Contains(c.Installer.Kickstart.Contents, "\nostreesetup ") {
					t.Error("the anaconda-iso kickstart installs an image of its own")
				}
				ksvalidate(t, []byte(c.Installer.Kickstart.Contents))
				return
			}
			if len(c.User) != 1 || c.User[0].Name != "admin" || *c.User[0].Key != testKey || c.User[0].Groups[0] != "wheel" {
				t.Errorf("user: %+v", c.User)
			}
			if len(c.Filesystem) != 2 || c.Filesystem[0].Mountpoint != "/" || c.Filesystem[0].MinSize != 20<<30 {
				t.Errorf("filesystems: %+v", c.Filesystem)
			}
		})
	}
}
