// Package registry renders the device's registry access from build's
// options: the pull secret CRI-O reads (0600, marked secret: the lock
// records its path, never its content), the registries.conf.d drop-in that
// sends every image of the plan to a mirror (checked by resolving each
// image through it with containers/image), and the mirror's CA. The files
// join the plan's device files and its composition ID.
package registry
