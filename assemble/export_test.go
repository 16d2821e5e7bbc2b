package assemble

// LookAheadTarget is lookAheadTarget, for the tests of the assemble_test
// package (which imports assembletest, which imports assemble).
var LookAheadTarget = lookAheadTarget
