package main

// Bad installer inputs (build --kickstart, --bib, --user, --filesystem,
// --firewall-port, --ca-trust, --ostree-url, --image-type): one line,
// the documented exit code, nothing written.
func init() {
	badInputs = append(badInputs, []badInput{
		{
			name: "installer/ssh key file that is not a key",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--kickstart", "--ostree-url", "http://edge.example.com/repo", "--user", "admin", "--ssh-key", "{bad}/installer/not-a-key.pub"},
			want: `--ssh-key {bad}/installer/not-a-key.pub: line 1 is not an SSH public key (an authorized_keys line such as "ssh-ed25519 AAAA... user@host")`,
			code: exitError,
		},
		{
			name: "installer/size that is not a size",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--kickstart", "--ostree-url", "http://edge.example.com/repo", "--filesystem", "/=big"},
			want: `--filesystem "/=big": "big" is not a size (e.g. 20GiB, 512MiB, 10GB)`,
			code: exitUsage,
		},
		{
			name: "installer/port out of range",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--firewall-port", "70000/tcp"},
			want: `--firewall-port "70000/tcp": port 70000 is out of range (1-65535)`,
			code: exitUsage,
		},
		{
			name: "installer/user name useradd refuses",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--user", "Admin", "--ssh-key", "{bad}/installer/not-a-key.pub"},
			want: `--user "Admin" is not a user name useradd accepts (a lowercase letter or _, then up to 31 lowercase letters, digits, _ or -)`,
			code: exitUsage,
		},
		{
			name: "installer/CA file that is not PEM",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--ca-trust", "{bad}/installer/not-pem.crt"},
			want: `--ca-trust {bad}/installer/not-pem.crt: no PEM certificate in it`,
			code: exitError,
		},
		{
			name: "installer/edge-installer without --ostree-url",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--image-type", "edge-installer"},
			want: `--image-type edge-installer installs an ostree commit: pass --ostree-url URL where the commit built from blueprint.toml (--image-type edge-commit) is served`,
			code: exitError,
		},
		{
			name: "installer/image type that would drop the plan",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--image-type", "network-installer"},
			want: `osbuild's network-installer for rhel-9.8/x86_64 would drop the blueprint's packages, containers, customizations.firewall, customizations.services, customizations.files (it takes customizations.fips, customizations.locale)`,
			code: exitError,
		},
		{
			name: "installer/kickstart without a payload",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--kickstart"},
			want: `--kickstart installs an ostree commit or a bootc image: pass --ostree-url URL (and --ostree-ref) or --bootc-image IMAGE`,
			code: exitError,
		},
		{
			name: "installer/bib without bootc",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bib"},
			want: `--bib writes the bootc-image-builder config of the bootc image: add --bootc`,
			code: exitUsage,
		},
		{
			name: "installer/ostree url that is not one",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--kickstart", "--ostree-url", "edge.example.com/repo"},
			want: `--ostree-url "edge.example.com/repo" is not an http, https or file URL of an ostree repository`,
			code: exitUsage,
		},
		{
			name: "installer/filesystem nothing takes",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--filesystem", "/=20GiB"},
			want: `--filesystem: no output takes filesystem sizes: osbuild's edge-commit has none (they belong to the installed disk); add --kickstart or --bib, or an --image-type that takes them (edge-raw-image, qcow2...)`,
			code: exitError,
		},
		{
			name: "installer/disk size without --bib",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--disk-size", "40GiB"},
			want: `--disk-size is the size of bootc-image-builder's disk image: add --bootc --bib`,
			code: exitError,
		},
		{
			name: "installer/disk size with the anaconda-iso config",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--bib", "--kickstart", "--bootc-image", "quay.io/a/b:1", "--disk-size", "40GiB"},
			want: `--disk-size: with --kickstart, config.toml is for --type anaconda-iso, which installs onto the device's own disk (the kickstart gives LVMS what root and the volumes leave of it)`,
			code: exitError,
		},
		{
			name: "installer/disk size that is not a size",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--bib", "--disk-size", "big"},
			want: `--disk-size "big" is not a size (e.g. 40GiB, 64GB)`,
			code: exitUsage,
		},
		{
			name: "installer/disk size leaving LVMS nothing",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--bib", "--filesystem", "/=20GiB", "--disk-size", "21GiB"},
			want: `--disk-size 21 GiB leaves LVMS less than 1 GiB: the boot partitions and logical volumes take up to 21.5 GiB`,
			code: exitError,
		},
		{
			name: "installer/bib filesystem outside /var",
			args: []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", "{out}", "--bootc", "--bib", "--filesystem", "/data=5GiB"},
			want: `--filesystem /data: a bootc disk image mounts filesystems on /, /boot and directories below /var only (the rest of the tree is the image's)`,
			code: exitError,
		},
	}...)
}
