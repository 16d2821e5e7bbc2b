// Package write puts a build's output (output.Dir) on disk atomically: into
// a temporary directory beside the target, swapped into place only when
// every file is written, so that a failed build leaves the previous output
// untouched. It replaces only a directory that holds a previous build and
// nothing else (or anything, when forced), recovers what killed builds
// left, and expands the output path's placeholders ({id}, {profile},
// {arch}, {release}).
//
// It renders and resolves nothing: what it writes is what build rendered.
package write
