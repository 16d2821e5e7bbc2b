// Package request is what a user asks microshift-compose for, as data:
// the Request that the composition file (-f FILE), the command line flags
// and a matrix cell all decode into. Load reads and checks a composition
// file (strict TOML, paths relative to the file, each path checked to
// exist); Encode writes one (build --print-file); package schema generates
// the file's JSON Schema from these types.
//
// A Request holds values as the user gave them: paths, not the files'
// content; names, not resolved components. It must not load a catalog, a
// release or a user file, and must not import compose: reading and
// resolving are the commands' and compose's work.
package request
