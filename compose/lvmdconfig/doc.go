// Package lvmdconfig reads and checks an lvmd.yaml: the LVMS (TopoLVM)
// device-class configuration MicroShift hands to lvmd on the device.
//
// It checks the file against MicroShift's schema (socket-name,
// device-classes with name, volume-group, default, spare-gb, type,
// thin-pool, stripe, stripe-size, lvcreate-options) and TopoLVM's rules
// (exactly one default, unique names, thin needs a thin-pool, thick must
// not have one), naming the field path in every error, so that a malformed
// file fails the build instead of crash-looping topolvm-node in the field.
// It keeps the file's bytes as written; it does not inspect the host's
// volume groups (that is the device's business) or write anything.
package lvmdconfig
