// Package installer writes what installs a composition on a device: the
// Anaconda kickstart (microshift.ks) for an ostree commit or a bootc
// image, the kickstart body an installer image adds its own payload to
// (osbuild's edge-installer, bootc-image-builder's anaconda-iso), and the
// bootc-image-builder config.toml. It also checks the installer inputs
// that reach them: the user and its SSH keys, filesystem sizes and
// firewall ports.
//
// It generates from a plan and checked options; it does not resolve,
// read release data, validate blueprints or write files (compose writes
// what it returns).
package installer
