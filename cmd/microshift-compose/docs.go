package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newDocsCmd writes the Markdown CLI reference (docs/cli/) and man pages;
// CI regenerates docs/cli and fails when it differs from the checked-in copy.
func newDocsCmd() *cobra.Command {
	var dir, manDir string
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Generate the CLI reference (Markdown, and man pages with --man)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := cmd.Root()
			root.DisableAutoGenTag = true
			if dir != "" {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return fmt.Errorf("creating %s: %w", dir, err)
				}
				if err := doc.GenMarkdownTree(root, dir); err != nil {
					return fmt.Errorf("writing Markdown docs: %w", err)
				}
			}
			if manDir != "" {
				if err := os.MkdirAll(manDir, 0o755); err != nil {
					return fmt.Errorf("creating %s: %w", manDir, err)
				}
				hdr := &doc.GenManHeader{Title: "MICROSHIFT-COMPOSE", Section: "1", Source: "microshift-compose"}
				if err := doc.GenManTree(root, hdr, manDir); err != nil {
					return fmt.Errorf("writing man pages: %w", err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "docs/cli", "directory for the Markdown reference")
	cmd.Flags().StringVar(&manDir, "man", "", "directory for man pages (none when empty)")
	return cmd
}
