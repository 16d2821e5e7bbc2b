package lvmdconfig_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(""))
	f.Add([]byte("device-classes:\n- name: thin\n  volume-group: rhel\n  default: true\n  type: thin\n  thin-pool:\n    name: pool0\n    overprovision-ratio: 10\n"))
	f.Add([]byte("deviceClasses:\n- default: true\n  name: x\n  volume-group: rhel\n"))
	f.Add([]byte("device-classes: [{name: a, volume-group: vg, default: true, spare-gb: 18446744073709551616}]\n"))
	f.Add([]byte("device-classes: [{name: a, volume-group: vg, default: true, stripe: 2, stripe-size: 64k, lvcreate-options: [--type=raid1]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/lvmd.yaml"
		c, err := lvmdconfig.Parse(display, data)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, display+": ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		if c.Empty {
			if len(c.DeviceClasses) != 0 || c.SocketName != "" {
				t.Fatalf("an empty file with device classes or a socket: %+v", c)
			}
			return
		}
		defaults := 0
		names := map[string]bool{}
		for _, dc := range c.DeviceClasses {
			if dc.Default {
				defaults++
			}
			if dc.Name == "" || dc.VolumeGroup == "" || names[dc.Name] {
				t.Fatalf("accepted device class %+v", dc)
			}
			names[dc.Name] = true
			if (dc.Type == lvmdconfig.TypeThin) != (dc.ThinPool != nil) {
				t.Fatalf("accepted type %q with thin-pool %v", dc.Type, dc.ThinPool)
			}
		}
		if defaults != 1 {
			t.Fatalf("accepted %d default device classes", defaults)
		}
		if string(c.Data) != string(data) {
			t.Fatalf("Data is not the file as written")
		}
		again, err := lvmdconfig.Parse(display, data)
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("second Parse differs: %v", err)
		}
	})
}
