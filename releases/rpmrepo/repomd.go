package rpmrepo

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/xi2/xz"
)

// Limits on repository metadata. repomd.xml is a few kilobytes; the
// primary metadata of RHEL's largest repositories is tens of megabytes
// compressed and a few hundred uncompressed. It is streamed, never held.
const (
	MaxRepomdSize = 4 << 20
	// MaxPrimarySize bounds the compressed primary metadata.
	MaxPrimarySize = 512 << 20
	// MaxPrimaryOpenSize bounds it uncompressed, when repomd.xml does not
	// declare its size (then the declared open-size is the bound).
	MaxPrimaryOpenSize = 4 << 30
	// MaxPrimaryElement bounds one <package> element of the primary
	// metadata, and the text and markup between two of them. The XML
	// decoder holds a token whole, so this, not the document's bound, is
	// what the metadata can make the tool hold in memory (384 MiB of
	// whitespace in a 1 MB primary.xml.gz took 1 GB before it was
	// refused). A package's entry takes a few kilobytes.
	MaxPrimaryElement = 8 << 20
	// MaxPrimaryPackages bounds the release-info packages kept from one
	// repository: a few per build of each MicroShift version.
	MaxPrimaryPackages = 20000
)

// repomd is repodata/repomd.xml: where each kind of metadata is.
type repomd struct {
	XMLName xml.Name     `xml:"repomd"`
	Data    []repomdData `xml:"data"`
}

type repomdData struct {
	Type         string   `xml:"type,attr"`
	Checksum     checksum `xml:"checksum"`
	OpenChecksum checksum `xml:"open-checksum"`
	Location     location `xml:"location"`
	Size         int64    `xml:"size"`
	OpenSize     int64    `xml:"open-size"`
}

type checksum struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

type location struct {
	Href string `xml:"href,attr"`
	// Base is xml:base: where href is relative to, when not the
	// repository's own URL.
	Base string `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
}

// primaryLocation parses repomd.xml and returns its primary metadata entry.
func primaryLocation(data []byte) (*repomdData, error) {
	var md repomd
	if err := xml.Unmarshal(data, &md); err != nil {
		return nil, fmt.Errorf("invalid repomd.xml: %v", err)
	}
	for i := range md.Data {
		d := &md.Data[i]
		if d.Type != "primary" {
			continue
		}
		if d.Location.Href == "" {
			return nil, errors.New("invalid repomd.xml: the primary metadata has no location")
		}
		if _, err := newHash(d.Checksum); err != nil {
			return nil, fmt.Errorf("invalid repomd.xml: primary metadata: %w", err)
		}
		return d, nil
	}
	return nil, errors.New("invalid repomd.xml: no primary metadata (data type=\"primary\")")
}

// newHash returns the hash a checksum element names, refusing those too
// weak to trust (md5, sha1) and values that are no digest of it.
func newHash(c checksum) (hash.Hash, error) {
	var h hash.Hash
	switch strings.ToLower(c.Type) {
	case "sha256":
		h = sha256.New()
	case "sha224":
		h = sha256.New224()
	case "sha384":
		h = sha512.New384()
	case "sha512":
		h = sha512.New()
	case "md5", "sha", "sha1":
		return nil, fmt.Errorf("checksum type %q is too weak to trust (want sha256 or stronger; createrepo_c --checksum sha256)", c.Type)
	default:
		return nil, fmt.Errorf("unknown checksum type %q", c.Type)
	}
	v := strings.TrimSpace(c.Value)
	if b, err := hex.DecodeString(v); err != nil || len(b) != h.Size() {
		return nil, fmt.Errorf("checksum %q is not a %s digest", v, c.Type)
	}
	return h, nil
}

// primaryPackage is what is kept of a <package> of the primary metadata.
type primaryPackage struct {
	Type    string `xml:"type,attr"`
	Name    string `xml:"name"`
	Arch    string `xml:"arch"`
	Version struct {
		Epoch string `xml:"epoch,attr"`
		Ver   string `xml:"ver,attr"`
		Rel   string `xml:"rel,attr"`
	} `xml:"version"`
	Checksum checksum `xml:"checksum"`
	Size     struct {
		Package int64 `xml:"package,attr"`
	} `xml:"size"`
	Location location `xml:"location"`
}

func (p *primaryPackage) nevra() NEVRA {
	return NEVRA{Name: p.Name, Epoch: p.Version.Epoch, Version: p.Version.Ver, Release: p.Version.Rel, Arch: p.Arch}
}

// scanPrimary reads primary metadata (uncompressed, r) and returns the
// packages keep accepts by name. Other packages are decoded one at a time
// and dropped, so memory does not grow with the repository; no element or
// text between elements may take more than MaxPrimaryElement bytes.
func scanPrimary(r io.Reader, keep func(name string) bool) ([]primaryPackage, error) {
	budget := newElementBudget(r)
	dec := xml.NewDecoder(budget)
	var out []primaryPackage
	root := false
	for {
		budget.reset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if !root {
				return nil, errors.New("invalid primary metadata: no <metadata> element")
			}
			return out, nil
		}
		if err != nil {
			return nil, budget.explain(err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			if start.Name.Local != "metadata" {
				return nil, fmt.Errorf("invalid primary metadata: the root element is <%s>, not <metadata>", start.Name.Local)
			}
			root = true
			continue
		}
		if start.Name.Local != "package" {
			if err := dec.Skip(); err != nil {
				return nil, budget.explain(err)
			}
			continue
		}
		var p primaryPackage
		if err := dec.DecodeElement(&p, &start); err != nil {
			return nil, budget.explain(err)
		}
		if p.Type != "" && p.Type != "rpm" || !keep(p.Name) {
			continue
		}
		if len(out) == MaxPrimaryPackages {
			return nil, fmt.Errorf("more than %d release-info packages: %w (a repository holds a few per build of each MicroShift version)", MaxPrimaryPackages, ErrTooLarge)
		}
		out = append(out, p)
	}
}

// errElementTooLarge is an element of the primary metadata over
// MaxPrimaryElement.
var errElementTooLarge = fmt.Errorf("an XML element or the text between two is larger than %d bytes uncompressed: %w (refused as a decompression bomb or damaged metadata; a package's entry takes a few kilobytes)", MaxPrimaryElement, ErrTooLarge)

// elementBudget is what the XML decoder reads from: it fails with
// errElementTooLarge once more than MaxPrimaryElement bytes are read since
// the last reset, which scanPrimary does before each token or element it
// asks for. It is an io.ByteReader with a buffer of its own, so the
// decoder reads through it byte by byte (the count is exact) at the cost
// of the bufio.Reader it would otherwise use.
type elementBudget struct {
	r        io.Reader
	buf      []byte
	pos, end int
	err      error
	left     int64
	over     bool
}

func newElementBudget(r io.Reader) *elementBudget {
	return &elementBudget{r: r, buf: make([]byte, 64<<10), left: MaxPrimaryElement}
}

func (b *elementBudget) reset() { b.left = MaxPrimaryElement }

// fill reads more into the empty buffer; false when there is nothing more
// (b.err says why).
func (b *elementBudget) fill() bool {
	b.pos, b.end = 0, 0
	for try := 0; b.end == 0 && b.err == nil; try++ {
		if try == 100 { // as bufio.Reader: a reader that never gives data
			b.err = io.ErrNoProgress
			break
		}
		b.end, b.err = b.r.Read(b.buf)
	}
	return b.end > 0
}

func (b *elementBudget) ReadByte() (byte, error) {
	if b.left <= 0 {
		b.over = true
		return 0, errElementTooLarge
	}
	if b.pos == b.end && !b.fill() {
		return 0, b.err
	}
	c := b.buf[b.pos]
	b.pos++
	b.left--
	return c, nil
}

func (b *elementBudget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.over = true
		return 0, errElementTooLarge
	}
	if b.pos == b.end && !b.fill() {
		return 0, b.err
	}
	n := copy(p[:min(int64(len(p)), b.left)], b.buf[b.pos:b.end])
	b.pos += n
	b.left -= int64(n)
	return n, nil
}

// explain is the error of a decoder that failed: the budget's or the
// reader's own (a size limit, a stall), or invalid XML.
func (b *elementBudget) explain(err error) error {
	switch {
	case b.over:
		return errElementTooLarge
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrStalled):
		return err
	}
	return fmt.Errorf("invalid primary metadata: %w", err)
}

// decompressMetadata returns a reader of the uncompressed metadata file
// named href, told by its suffix as dnf does.
func decompressMetadata(r io.Reader, href string) (io.Reader, func(), error) {
	nothing := func() {}
	switch {
	case strings.HasSuffix(href, ".gz"):
		d, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return d, nothing, nil
	case strings.HasSuffix(href, ".xz"):
		d, err := xz.NewReader(r, maxDecoderWindow)
		if err != nil {
			return nil, nil, err
		}
		return d, nothing, nil
	case strings.HasSuffix(href, ".zst"):
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxDecoderWindow), zstd.WithDecoderMaxMemory(2*maxDecoderWindow))
		if err != nil {
			return nil, nil, err
		}
		return d, d.Close, nil
	case strings.HasSuffix(href, ".bz2"):
		return bzip2.NewReader(r), nothing, nil
	case strings.HasSuffix(href, ".xml"):
		return r, nothing, nil
	}
	return nil, nil, fmt.Errorf("unsupported compression of %s (want .gz, .xz, .zst, .bz2 or .xml)", href)
}

// readPrimary streams the primary metadata (compressed, body) through its
// checksum and decompression into scanPrimary. The result counts only
// once the whole file matched the checksum repomd.xml lists for it.
func readPrimary(body io.Reader, d *repomdData, keep func(string) bool) ([]primaryPackage, error) {
	h, err := newHash(d.Checksum)
	if err != nil {
		return nil, err
	}
	limit, why := int64(MaxPrimarySize), "the most primary metadata may be"
	if d.Size > 0 && d.Size < limit {
		limit, why = d.Size, "the size repomd.xml lists"
	}
	counted := &sizeLimit{r: body, left: limit, err: fmt.Errorf("larger than %d bytes, %s: %w", limit, why, ErrTooLarge)}
	tee := io.TeeReader(counted, h)
	raw, closeRaw, err := decompressMetadata(bufio.NewReader(tee), d.Location.Href)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %v", d.Location.Href, err)
	}
	defer closeRaw()
	open, why := int64(MaxPrimaryOpenSize), "the most primary metadata may be"
	if d.OpenSize > 0 && d.OpenSize < open {
		open, why = d.OpenSize, "the open-size repomd.xml lists"
	}
	pkgs, err := scanPrimary(&sizeLimit{r: raw, left: open, err: fmt.Errorf("larger than %d bytes uncompressed, %s: %w", open, why, ErrTooLarge)}, keep)
	if err != nil {
		if errors.Is(err, ErrStalled) {
			return nil, err
		}
		// A damaged download shows as bad XML, a bad stream or more
		// uncompressed bytes than repomd.xml declares first: say so when
		// the checksum disagrees too. (A compressed file over its limit
		// fails the drain below and keeps its own error.)
		if _, cerr := io.Copy(io.Discard, tee); cerr == nil && hex.EncodeToString(h.Sum(nil)) != strings.TrimSpace(strings.ToLower(d.Checksum.Value)) {
			return nil, fmt.Errorf("%s does not match its checksum in repomd.xml (%v)", d.Location.Href, err)
		}
		return nil, err
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return nil, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(strings.ToLower(d.Checksum.Value)) {
		return nil, fmt.Errorf("%s does not match its checksum in repomd.xml: %s %s, want %s", d.Location.Href, d.Checksum.Type, got, strings.TrimSpace(d.Checksum.Value))
	}
	return pkgs, nil
}

// ErrTooLarge is wrapped when a file is larger than it may be.
var ErrTooLarge = errors.New("file too large")

// sizeLimit fails with err once more than left bytes come out of r.
type sizeLimit struct {
	r    io.Reader
	left int64
	err  error
}

func (s *sizeLimit) Read(p []byte) (int, error) {
	if s.left <= 0 {
		// One byte more is enough to know.
		var one [1]byte
		n, err := io.ReadFull(s.r, one[:])
		if n > 0 {
			return 0, s.err
		}
		if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}
