package airgap

// InterruptPruneAfter makes a prune with o stop with err once it has
// removed n blobs, as a kill or a full disk would stop it there.
func InterruptPruneAfter(o *PruneOptions, n int, err error) {
	o.removed = func(i int) error {
		if i >= n {
			return err
		}
		return nil
	}
}
