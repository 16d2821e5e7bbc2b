package rpmrepo

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/cavaliergopher/cpio"
	"github.com/klauspost/compress/zstd"
	rpmutils "github.com/sassoftware/go-rpmutils"
	"github.com/xi2/xz"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Limits on what an RPM may make the tool read or allocate. A real
// microshift-release-info RPM is tens of kilobytes, its payload a little
// more; these leave a thousandfold margin and stop a hostile file early.
const (
	// MaxRPMSize bounds a .rpm file, read whole into memory.
	MaxRPMSize = 32 << 20
	// MaxPayloadSize bounds the uncompressed payload an RPM may declare.
	MaxPayloadSize = 64 << 20
	// MaxReleaseBytes bounds the release files of one RPM together (each
	// is within releases.MaxFileSize): what is held in memory of it.
	MaxReleaseBytes = 16 << 20
	// maxHeaderTags and maxHeaderData are rpm's own bounds on a header
	// (hdrchkTags, hdrchkData in rpm's header.c).
	maxHeaderTags = 0xffff
	maxHeaderData = 16 << 20
	// maxDecoderWindow bounds the xz dictionary and zstd window a payload
	// may ask for (rpm's xz level 2 uses 1 MiB, zstd level 19 8 MiB).
	maxDecoderWindow = 64 << 20
)

// ReleaseDir is where the release-info RPMs install the release files.
const ReleaseDir = "/usr/share/microshift/release"

// CorePackage is the RPM holding release-<arch>.json.
const CorePackage = "microshift-release-info"

// IsReleaseInfo reports whether name is a MicroShift release-info RPM:
// microshift-release-info, or microshift-<component>-release-info.
func IsReleaseInfo(name string) bool {
	if name == CorePackage {
		return true
	}
	c, ok := strings.CutPrefix(name, "microshift-")
	if !ok {
		return false
	}
	c, ok = strings.CutSuffix(c, "-release-info")
	return ok && c != ""
}

// ErrNotReleaseInfo is wrapped when an RPM is not a MicroShift release-info
// package.
var ErrNotReleaseInfo = errors.New("not a MicroShift release-info package (microshift-release-info or microshift-<component>-release-info)")

// ErrNotRPM is a file that does not begin with the RPM lead.
var ErrNotRPM = errors.New("not an RPM file: it does not begin with the RPM lead (magic ed ab ee db); want a release-info .rpm, as dnf download fetches it")

// ErrPayloadTooLarge is wrapped when a payload decompresses to more than
// its header declares: an RPM bomb, or a damaged file.
var ErrPayloadTooLarge = errors.New("payload is larger than the RPM declares")

// NEVRA names an RPM: name, epoch, version, release, arch.
type NEVRA struct {
	Name    string `json:"name"`
	Epoch   string `json:"epoch,omitempty"`
	Version string `json:"version"`
	Release string `json:"release"`
	Arch    string `json:"arch"`
}

// String is the NEVRA as dnf prints it: name-[epoch:]version-release.arch,
// the epoch left out when it is 0.
func (n NEVRA) String() string {
	e := ""
	if n.Epoch != "" && n.Epoch != "0" {
		e = n.Epoch + ":"
	}
	return fmt.Sprintf("%s-%s%s-%s.%s", n.Name, e, n.Version, n.Release, n.Arch)
}

// EVR is [epoch:]version-release.
func (n NEVRA) EVR() string {
	e := ""
	if n.Epoch != "" && n.Epoch != "0" {
		e = n.Epoch + ":"
	}
	return e + n.Version + "-" + n.Release
}

// Package is one release-info RPM as read.
type Package struct {
	NEVRA NEVRA
	// SHA256 is the hex sha256 of the whole .rpm file, the checksum a
	// repository's metadata lists for it.
	SHA256 string
	Size   int64
	// Files are the release files the RPM installs in ReleaseDir, sorted
	// by name; Raw their bytes as the RPM holds them, by name.
	Files []*releases.File
	Raw   map[string][]byte
}

// ReadPackage reads a MicroShift release-info RPM (the whole file, data)
// and returns its identity and release files; display names it in errors.
// The RPM's header digest and payload digest must match, the payload must
// not decompress to more than the header declares, and the package must be
// a release-info package installing release files.
func ReadPackage(display string, data []byte) (*Package, error) {
	if len(data) > MaxRPMSize {
		return nil, fmt.Errorf("%s: file is larger than %d bytes; a release-info RPM is tens of kilobytes", display, MaxRPMSize)
	}
	payloadStart, err := checkHeaderBounds(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	hdr, err := verify(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	n, err := nevra(hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the RPM header: %w", display, err)
	}
	if !IsReleaseInfo(n.Name) || isSource(data) {
		return nil, fmt.Errorf("%s: %s is %w", display, n, ErrNotReleaseInfo)
	}
	sum := sha256.Sum256(data)
	pkg := &Package{NEVRA: n, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	if pkg.Files, pkg.Raw, err = readPayload(display, hdr, data[payloadStart:]); err != nil {
		return nil, err
	}
	if len(pkg.Files) == 0 {
		return nil, fmt.Errorf("%s: %s installs no release files in %s: %w", display, n, ReleaseDir, ErrNotReleaseInfo)
	}
	for _, f := range pkg.Files {
		if (f.Component == "") != (n.Name == CorePackage) {
			return nil, fmt.Errorf("%s: %s installs %s, which belongs to %s", display, n, f.Name, packageFor(f))
		}
	}
	return pkg, nil
}

// packageFor names the release-info RPM that installs f.
func packageFor(f *releases.File) string {
	if f.Component == "" {
		return CorePackage
	}
	return "microshift-" + f.Component + "-release-info"
}

// checkHeaderBounds checks, before go-rpmutils allocates what the headers
// ask for, that the lead and both headers fit in data and within rpm's own
// limits, and returns where the payload starts.
func checkHeaderBounds(data []byte) (int, error) {
	const leadSize, introSize = 96, 16
	if len(data) < 4 || !bytes.Equal(data[:4], []byte{0xed, 0xab, 0xee, 0xdb}) {
		return 0, ErrNotRPM
	}
	if len(data) < leadSize {
		return 0, fmt.Errorf("truncated RPM: %d bytes, shorter than the RPM lead", len(data))
	}
	off := leadSize
	for i, what := range []string{"signature header", "header"} {
		if len(data)-off < introSize {
			return 0, fmt.Errorf("truncated RPM: the file ends before its %s", what)
		}
		intro := data[off : off+introSize]
		if !bytes.Equal(intro[:3], []byte{0x8e, 0xad, 0xe8}) {
			return 0, fmt.Errorf("damaged RPM: bad magic of its %s", what)
		}
		tags := uint64(binary.BigEndian.Uint32(intro[8:12]))
		size := uint64(binary.BigEndian.Uint32(intro[12:16]))
		if tags > maxHeaderTags || size > maxHeaderData {
			return 0, fmt.Errorf("damaged RPM: its %s declares %d tags and %d bytes, beyond rpm's limits", what, tags, size)
		}
		if i == 0 {
			size = (size + 7) / 8 * 8 // the signature header is padded to 8 bytes
		}
		end := uint64(off) + introSize + tags*16 + size
		if end > uint64(len(data)) {
			return 0, fmt.Errorf("truncated RPM: its %s needs %d bytes, the file has %d", what, end, len(data))
		}
		off = int(end)
	}
	return off, nil
}

func isSource(data []byte) bool { return len(data) >= 8 && binary.BigEndian.Uint16(data[6:8]) == 1 }

// verify parses the headers with go-rpmutils and checks the header digest
// and the payload digest (over the compressed payload). PGP signatures are
// not checked: the package's checksum in the repository metadata, or the
// user's choice of file, is what it is trusted by. go-rpmutils indexes
// header data by the offsets a header declares without checking them, so a
// panic on a malformed header is an error here.
func verify(data []byte) (hdr *rpmutils.RpmHeader, err error) {
	defer func() {
		if r := recover(); r != nil {
			hdr, err = nil, fmt.Errorf("damaged RPM: malformed header (%v)", r)
		}
	}()
	hdr, _, err = rpmutils.Verify(bytes.NewReader(data), nil)
	if err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "digest mismatch") || strings.Contains(msg, "mismatch in signature header"):
			return nil, fmt.Errorf("damaged or truncated RPM: %s", msg)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("truncated RPM")
		}
		return nil, fmt.Errorf("damaged RPM: %s", msg)
	}
	return hdr, nil
}

func nevra(hdr *rpmutils.RpmHeader) (n NEVRA, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed name tags (%v)", r)
		}
	}()
	v, err := hdr.GetNEVRA()
	if err != nil {
		return NEVRA{}, err
	}
	n = NEVRA{Name: v.Name, Epoch: v.Epoch, Version: v.Version, Release: v.Release, Arch: v.Arch}
	for _, s := range []string{n.Name, n.Epoch, n.Version, n.Release, n.Arch} {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '/' }) {
			return NEVRA{}, fmt.Errorf("name, version, release or arch %q is empty or holds a space, control character or /", s)
		}
	}
	return n, nil
}

// readPayload decompresses the payload and reads the release files out of
// its cpio archive.
func readPayload(display string, hdr *rpmutils.RpmHeader, payload []byte) ([]*releases.File, map[string][]byte, error) {
	if hdr.HasTag(rpmutils.PAYLOADFORMAT) {
		if f, err := hdr.GetString(rpmutils.PAYLOADFORMAT); err != nil || f != "cpio" {
			return nil, nil, fmt.Errorf("%s: unsupported payload format %q (want cpio)", display, f)
		}
	}
	declared := int64(MaxPayloadSize)
	if size, err := hdr.PayloadSize(); err == nil {
		if size < 0 {
			return nil, nil, fmt.Errorf("%s: damaged RPM: its header declares a payload of %d bytes", display, size)
		}
		if size > MaxPayloadSize {
			return nil, nil, fmt.Errorf("%s: the payload is %d bytes uncompressed, more than %d; a release-info RPM's is tens of kilobytes", display, size, MaxPayloadSize)
		}
		declared = size
	}
	compressor := ""
	if hdr.HasTag(rpmutils.PAYLOADCOMPRESSOR) {
		c, err := hdr.GetString(rpmutils.PAYLOADCOMPRESSOR)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading the payload compressor: %v", display, err)
		}
		compressor = c
	}
	plain, closePlain, err := decompressor(bytes.NewReader(payload), compressor)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", display, err)
	}
	defer closePlain()
	bounded := &sizeLimit{r: plain, left: declared, err: fmt.Errorf("%w (%d bytes): refused as an RPM bomb or a damaged file", ErrPayloadTooLarge, declared)}
	arc := cpio.NewReader(bufio.NewReader(bounded))
	var files []*releases.File
	raw := map[string][]byte{}
	var total int64
	for {
		h, err := arc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading the payload: %w", display, payloadError(err))
		}
		name := path.Clean("/" + strings.TrimPrefix(h.Name, "."))
		if path.Dir(name) != ReleaseDir || !h.Mode.IsRegular() {
			continue
		}
		base := path.Base(name)
		if _, _, ok, _ := releases.ParseFileName(base); !ok {
			continue
		}
		if h.Size < 0 || h.Size > releases.MaxFileSize {
			return nil, nil, fmt.Errorf("%s: %s is %d bytes, larger than %d", display, name, h.Size, releases.MaxFileSize)
		}
		if total += h.Size; total > MaxReleaseBytes {
			return nil, nil, fmt.Errorf("%s: the release files in %s add up to more than %d bytes (at %s); a release-info RPM's are tens of kilobytes", display, ReleaseDir, MaxReleaseBytes, name)
		}
		body, err := io.ReadAll(arc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading %s from the payload: %w", display, name, payloadError(err))
		}
		if int64(len(body)) != h.Size {
			return nil, nil, fmt.Errorf("%s: truncated payload: %s ends after %d of %d bytes", display, name, len(body), h.Size)
		}
		if slices.ContainsFunc(files, func(f *releases.File) bool { return f.Name == base }) {
			return nil, nil, fmt.Errorf("%s: the payload holds %s twice", display, name)
		}
		f, err := releases.ParseFile(display+": "+name, base, body)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
		raw[base] = body
	}
	slices.SortFunc(files, func(a, b *releases.File) int { return strings.Compare(a.Name, b.Name) })
	return files, raw, nil
}

// payloadError says what a decompressor or cpio error means.
func payloadError(err error) error {
	switch {
	case errors.Is(err, ErrPayloadTooLarge):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("truncated payload")
	}
	return fmt.Errorf("damaged payload: %v", err)
}

// decompressor returns a reader of the uncompressed payload for rpm's
// PAYLOADCOMPRESSOR, with the decoders' memory bounded. "" (no tag) is
// gzip or uncompressed, told by the gzip magic, as rpm does.
func decompressor(r *bytes.Reader, compressor string) (io.Reader, func(), error) {
	nothing := func() {}
	switch compressor {
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxDecoderWindow), zstd.WithDecoderMaxMemory(MaxPayloadSize+maxDecoderWindow))
		if err != nil {
			return nil, nil, fmt.Errorf("damaged payload: %v", err)
		}
		return d, d.Close, nil
	case "xz":
		d, err := xz.NewReader(r, maxDecoderWindow)
		if err != nil {
			return nil, nil, fmt.Errorf("damaged payload: %v", err)
		}
		return d, nothing, nil
	case "gzip":
		d, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("damaged payload: %v", payloadError(err))
		}
		return d, nothing, nil
	case "bzip2":
		return bzip2.NewReader(r), nothing, nil
	case "":
		var magic [2]byte
		if n, _ := r.ReadAt(magic[:], 0); n == 2 && magic == [2]byte{0x1f, 0x8b} {
			return decompressor(r, "gzip")
		}
		return r, nothing, nil
	}
	return nil, nil, fmt.Errorf("unsupported payload compression %q (want zstd, xz, gzip or bzip2)", compressor)
}
