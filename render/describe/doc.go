// Package describe writes a plan for people, as resolve prints it: the
// components in apply order and why each is there, and with explain every
// image, package, config value and device file with where it comes from.
package describe
