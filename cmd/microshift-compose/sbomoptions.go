package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// sourceDateEpoch is the reproducible-builds variable build reads for the
// SBOM's creation time.
const sourceDateEpoch = "SOURCE_DATE_EPOCH"

// sbomOptions are the SBOM's creation time (SOURCE_DATE_EPOCH when set,
// else the Unix epoch: same inputs, same bytes) and the tool version it
// names.
func sbomOptions() (sbom.Options, error) {
	opts := sbom.Options{ToolVersion: versionString()}
	if v, ok := os.LookupEnv(sourceDateEpoch); ok && v != "" {
		t, err := sbom.ParseSourceDateEpoch(v)
		if err != nil {
			return sbom.Options{}, err
		}
		opts.Created = t
	}
	return opts, nil
}

// addSBOMFormatFlag binds build's --sbom-format.
func addSBOMFormatFlag(cmd *cobra.Command, formats *[]string) {
	cmd.Flags().StringSliceVar(formats, "sbom-format", *formats, "SBOMs to write, comma-separated: spdx ("+output.SBOMFile+", SPDX 2.3), cyclonedx ("+output.CycloneDXFile+", CycloneDX 1.6)")
	_ = cmd.RegisterFlagCompletionFunc("sbom-format", completeValues(string(sbom.FormatSPDX), string(sbom.FormatCycloneDX)))
}

// sbomFormats checks --sbom-format's values.
func sbomFormats(values []string) ([]sbom.Format, error) {
	var out []sbom.Format
	for _, v := range values {
		f := sbom.Format(strings.ToLower(strings.TrimSpace(v)))
		if !slices.Contains(sbom.Formats, f) {
			return nil, usageError{fmt.Errorf("--sbom-format %q: unknown format (want %s or %s, or both comma-separated)", v, sbom.FormatSPDX, sbom.FormatCycloneDX)}
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, usageError{fmt.Errorf("--sbom-format: no format given (want %s, %s, or both)", sbom.FormatSPDX, sbom.FormatCycloneDX)}
	}
	return out, nil
}
