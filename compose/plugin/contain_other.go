//go:build unix && !linux

package plugin

import "os"

// contain runs the plugin directly in a session of its own: without Linux's
// child subreaper, a process it starts in yet another session (setsid) is
// not found when the plugin's group is killed.
func contain(dir string, env []string, command string, stdout, stderr *os.File) (contained, error) {
	return startDirect(dir, env, command, stdout, stderr)
}
