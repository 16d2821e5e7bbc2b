package main

import (
	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
)

// hardeningOptions are --fips, --karg and --cis: what the device's OS is
// asked to be beyond its files. They fill compose.HardeningOptions, which
// a composition file's fips, kernel_args and cis keys fill too.
type hardeningOptions struct {
	compose.HardeningOptions
}

func (o *hardeningOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.FIPS, "fips", false, "FIPS mode, as MicroShift's own FIPS images set it: customizations.fips in the blueprint, fips=1 in bootc's kargs.d and the FIPS crypto policy in the Containerfile, fips=1 on the kickstart's bootloader line, and the MicroShift config the release needs; refused on an arch or release MicroShift is not tested in FIPS mode on (x86_64, 4.15 and later; bootc images from 4.19)")
	f.StringArrayVar(&o.KernelArgs, "karg", nil, "kernel argument KEY or KEY=VALUE the device boots with (repeat, in order): the blueprint's customizations.kernel.append where the image type takes it, a bootc kargs.d file in the Containerfile, the kickstart's bootloader --append; no spaces, quotes or shell characters, no duplicates or two values of one key, none that chooses, adds, runs or masks units or opens a shell (init=, single, systemd.unit=, systemd.wants=, systemd.mask=, systemd.run=, systemd.debug_shell, rd.break...; systemd.* refused is refused as the initramfs' rd.systemd.* too), and none that the bootloader, ostree or --fips set")
	f.StringVar(&o.CIS, "cis", "", "harden the OS with a CIS benchmark profile: level1, level2, or a CIS profile ID of the SCAP Security Guide (cis_server_l1, cis, cis_workstation_l2, with or without xccdf_org.ssgproject.content_profile_): osbuild's OpenSCAP remediation (customizations.openscap) tailored to keep what MicroShift needs (IP forwarding), and a first-boot unit regenerating the setuid/setgid audit rules; needs an --image-type osbuild remediates (qcow2, image-installer...: not an rpm-ostree commit, not --bootc)")
}

// Validate checks the kernel arguments and the CIS profile's form; the
// release, arch, distro and image type are checked when the plan is.
func (o *hardeningOptions) Validate() error {
	if err := o.HardeningOptions.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// apply puts the options into req.
func (o *hardeningOptions) apply(req *compose.Request) error {
	if err := o.Validate(); err != nil {
		return err
	}
	req.Hardening = o.HardeningOptions
	return nil
}
