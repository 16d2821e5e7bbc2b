package airgap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A dir:DIR target is an OCI image layout with, beside it, one directory
// per image in the format of skopeo's dir: transport: manifest.json (the
// manifest or index the reference names), <digest>.manifest.json for the
// manifests an index lists, and each config and layer blob as <digest>,
// hard-linked to the layout's blobs/sha256/ (so a blob several images
// share is stored once, and a COPY of DIR into an image keeps the links).
// Every skopeo reads it, whatever the manifests' media types: the skopeo of
// RHEL bootc bases before containers/image 5.35 cannot read Docker-typed
// manifests from an OCI layout. image-list.txt lists "reference,directory"
// per line, as MicroShift's image-mode documentation does.
const (
	// DirListFile lists the images of a dir:DIR target.
	DirListFile = "image-list.txt"
	dirVersion  = "Directory Transport Version: 1.1\n"
)

// DirNotPruned is why prune takes no dir: layout, said whether it is named
// dir:DIR or found behind oci:DIR: its images are those of one build, and
// each is also a directory prune would not remove.
const DirNotPruned = "a dir: layout holds the images of one build's bootc Containerfile, each also as a directory of hard links listed in " + DirListFile + ", which prune would leave behind: mirror the lock of the build you keep into a new dir: instead (mirror --lock compose.lock.json --to dir:OUTPUT/images)"

// DirName is the directory of an image under a dir:DIR target: the sha256
// of its reference and a newline, which is what MicroShift's image-mode
// Containerfiles compute with `echo "${img}" | sha256sum`.
func DirName(ref string) string {
	sum := sha256.Sum256([]byte(ref + "\n"))
	return hex.EncodeToString(sum[:])
}

// writeDirView writes the dir: directory of an image whose manifests and
// blobs are in the layout, replacing an earlier one.
func (l *layout) writeDirView(im *image) error {
	name := DirName(im.Ref)
	tmp, err := os.MkdirTemp(l.dir, "."+name+partialMark)
	if err != nil {
		return fmt.Errorf("writing dir:%s: %w", filepath.Join(l.dir, name), err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	write := func(file string, data []byte) error {
		return os.WriteFile(filepath.Join(tmp, file), data, 0o644)
	}
	if err := write("version", []byte(dirVersion)); err != nil {
		return err
	}
	for _, mb := range im.Manifests {
		file := mb.Digest.Hex + ".manifest.json"
		if mb.Digest == im.Top.Digest {
			file = "manifest.json"
		}
		if err := write(file, mb.Data); err != nil {
			return err
		}
	}
	for _, b := range im.Blobs {
		if err := linkOrCopy(l.path(b.Digest), filepath.Join(tmp, b.Digest.Hex)); err != nil {
			return fmt.Errorf("writing dir:%s: %w", filepath.Join(l.dir, name), err)
		}
	}
	final := filepath.Join(l.dir, name)
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	ok = true
	return nil
}

// linkOrCopy hard-links src to dst, copying where the file system cannot link.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	if _, err := io.CopyBuffer(out, in, *bp); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeDirList writes image-list.txt: "reference,directory" for every
// image of index.json that has its dir: directory, sorted.
func (l *layout) writeDirList() error {
	var lines []string
	for _, d := range l.index.Manifests {
		ref := d.Annotations[AnnotationRefName]
		if ref == "" || strings.ContainsAny(ref, ",\n") {
			continue
		}
		if st, err := os.Stat(filepath.Join(l.dir, DirName(ref), "manifest.json")); err == nil && st.Mode().IsRegular() {
			lines = append(lines, ref+","+DirName(ref)+"\n")
		}
	}
	sort.Strings(lines)
	var b bytes.Buffer
	for _, line := range lines {
		b.WriteString(line)
	}
	if err := writeFileAtomic(filepath.Join(l.dir, DirListFile), b.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(l.dir, DirListFile), err)
	}
	return nil
}

// removePartialViews removes the temporary directories and files a killed
// run left at the top of the layout.
func (l *layout) removePartialViews() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", l.dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), partialMark) {
			if err := os.RemoveAll(filepath.Join(l.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("removing what an earlier run left: %w", err)
			}
		}
	}
	return nil
}
