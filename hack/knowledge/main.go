// Command knowledge regenerates microshift-compose's release data from a
// MicroShift git directory: the embedded release bundles (releases/data)
// and the release knowledge (releases/knowledge/data), one stream per
// commit pinned in releases/knowledge/upstream/pins.toml, merged with
// releases/knowledge/upstream/handkept.toml. `make knowledge` runs it with
// -refresh (the pins move to their branches' heads first), `make
// knowledge-pinned` without.
//
//	knowledge -git-dir DIR [-refresh] [-check] [-root DIR]
//
// -check writes nothing: it exits 1 naming every file that differs from
// what the pins generate.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
	"github.com/microshift-compose/microshift-compose/releases/knowledge/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "knowledge:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("knowledge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gitDir := fs.String("git-dir", os.Getenv("MICROSHIFT"), "the MicroShift git directory (bare or not); default $MICROSHIFT")
	refresh := fs.Bool("refresh", false, "move every pin to its branch's head and add new release-X.Y branches before generating")
	check := fs.Bool("check", false, "write nothing; fail naming every file that differs")
	root := fs.String("root", ".", "the microshift-compose source tree")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *refresh && *check {
		return fmt.Errorf("-refresh and -check cannot be combined")
	}
	g, err := upstream.OpenGit(ctx, *gitDir)
	if err != nil {
		return err
	}
	defer g.Close()
	pins, hand, err := upstream.LoadInputs(*root)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	if *refresh {
		if pins, err = upstream.Refresh(ctx, g, pins, stderr); err != nil {
			return err
		}
		data, err := pins.Encode()
		if err != nil {
			return err
		}
		files[upstream.PinsFile] = data
	}
	out, err := upstream.Generate(ctx, g, pins, hand)
	if err != nil {
		return err
	}
	for p, data := range out.Files {
		files[p] = data
	}
	stale, err := upstream.StaleBundles(*root, pins)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)
	var differ []string
	var writes []atomicfile.File
	for _, p := range names {
		path := filepath.Join(*root, filepath.FromSlash(p))
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, files[p]) {
			continue
		}
		differ = append(differ, p)
		writes = append(writes, atomicfile.File{Path: path, Data: files[p], Mode: 0o644})
	}
	if !*check && len(writes) > 0 {
		// All or none: a half-written set of bundles and knowledge would
		// describe no upstream state.
		if err := atomicfile.WriteAll(writes); err != nil {
			return err
		}
		for _, p := range differ {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}
	if *check {
		differ = append(differ, stale...)
		if len(differ) > 0 {
			return fmt.Errorf("generated data differs from the pinned commits' (run 'make knowledge-pinned'): %s", strings.Join(differ, ", "))
		}
		fmt.Fprintf(stdout, "%d files match the pinned commits\n", len(names))
		return nil
	}
	for _, p := range stale {
		if err := os.Remove(filepath.Join(*root, filepath.FromSlash(p))); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s (its stream is not pinned)\n", p)
	}
	if len(differ)+len(stale) == 0 {
		fmt.Fprintf(stdout, "%d files unchanged\n", len(names))
	}
	return nil
}
