package atomicfile

// SetAfterRename lets tests stop a commit between two renames.
func SetAfterRename(f func(n int)) { afterRename = f }
