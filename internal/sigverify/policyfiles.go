package sigverify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// A containers-policy.json names files for its requirements to read: the
// keys of sigstoreSigned (keyPath, keyPaths, rekorPublicKeyPath(s)) and
// signedBy (keyPath, keyPaths), and the CA certificates of Fulcio and PKI
// (caPath, caRootsPath, caIntermediatesPath). containers/image reads them
// with os.ReadFile when it first evaluates the rule, after the registry
// answered: a named pipe there blocks past every timeout, /dev/zero is
// read until memory runs out. So every such file goes through the input
// gate here first (a regular file, bounded) and is checked to be what the
// field wants (one PEM public key, PEM certificates, an OpenPGP keyring
// without secret keys); for evaluation here, its checked content replaces
// the path (keyData and so on), so containers/image opens nothing.

// Limits of the files a policy names.
const (
	maxCertificates = 1 << 20 // a system CA bundle is ~200 KiB
	maxKeyring      = 1 << 20
	// maxPolicyFiles bounds what the files of one policy add up to, each
	// counted as often as the policy names it (what is inlined, and what
	// containers/image then decodes per rule): a few keys and a system CA
	// bundle (~200 KiB) for a handful of scopes are well under it.
	maxPolicyFiles = 4 << 20
)

// fileKind is what a file a policy names must hold.
type fileKind int

const (
	publicKeyFile fileKind = iota // one PEM public key (sigstore)
	rekorKeyFile                  // one PEM ECDSA public key
	certFile                      // PEM certificates
	gpgFile                       // an OpenPGP keyring (signedBy)
)

func (k fileKind) what() string {
	switch k {
	case certFile:
		return "certificates"
	case gpgFile:
		return "keyring"
	}
	return "key"
}

func (k fileKind) limit() int64 {
	switch k {
	case certFile:
		return maxCertificates
	case gpgFile:
		return maxKeyring
	}
	return maxKey
}

// check returns what of data goes in place of the path: the file as it
// is, or for a keyring its public keys.
func (k fileKind) check(data []byte) ([]byte, error) {
	var err error
	switch k {
	case publicKeyFile:
		err = CheckPublicKey(data)
	case rekorKeyFile:
		err = checkRekorKey(data)
	case certFile:
		err = checkCertificates(data)
	case gpgFile:
		return gpgPublicKeys(data)
	}
	return data, err
}

// fileField is a requirement field naming one file (path) or a list
// (paths), and the field its content goes to instead (data, or datas for
// a list; a list with only data is merged, as signedBy's keyPaths).
type fileField struct {
	path, paths string
	data, datas string
	kind        fileKind
}

var (
	sigstoreFields = []fileField{
		{path: "keyPath", data: "keyData", kind: publicKeyFile},
		{paths: "keyPaths", datas: "keyDatas", kind: publicKeyFile},
		{path: "rekorPublicKeyPath", data: "rekorPublicKeyData", kind: rekorKeyFile},
		{paths: "rekorPublicKeyPaths", datas: "rekorPublicKeyDatas", kind: rekorKeyFile},
	}
	fulcioFields = []fileField{{path: "caPath", data: "caData", kind: certFile}}
	pkiFields    = []fileField{
		{path: "caRootsPath", data: "caRootsData", kind: certFile},
		{path: "caIntermediatesPath", data: "caIntermediatesData", kind: certFile},
	}
	signedByFields = []fileField{
		{path: "keyPath", data: "keyData", kind: gpgFile},
		{paths: "keyPaths", data: "keyData", kind: gpgFile},
	}
)

// PolicyFile is one file a policy names.
type PolicyFile struct {
	// Field is where: `transports.docker["quay.io"][0].keyPath`.
	Field string
	// Path is the file as the policy names it.
	Path string
	kind fileKind
}

// policyTree is a policy decoded as plain JSON values, to find and
// replace the fields that name files (containers/image's requirement types
// keep their fields unexported).
type policyTree map[string]any

func decodePolicyTree(data []byte) (policyTree, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree policyTree
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// visitFiles calls fn for every file the policy's requirements name, in
// order (the default, then transports and scopes sorted). fn returns what
// goes in place of the file; with inline, it replaces the path.
func (t policyTree) visitFiles(inline bool, fn func(f PolicyFile) ([]byte, error)) error {
	visitList := func(where string, v any) error {
		reqs, _ := v.([]any)
		for i, r := range reqs {
			req, ok := r.(map[string]any)
			if !ok {
				continue
			}
			at := fmt.Sprintf("%s[%d]", where, i)
			var err error
			switch req["type"] {
			case "sigstoreSigned":
				err = visitFields(req, at, sigstoreFields, inline, fn)
				if sub, ok := req["fulcio"].(map[string]any); ok && err == nil {
					err = visitFields(sub, at+".fulcio", fulcioFields, inline, fn)
				}
				if sub, ok := req["pki"].(map[string]any); ok && err == nil {
					err = visitFields(sub, at+".pki", pkiFields, inline, fn)
				}
			case "signedBy":
				err = visitFields(req, at, signedByFields, inline, fn)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := visitList("default", t["default"]); err != nil {
		return err
	}
	transports, _ := t["transports"].(map[string]any)
	for _, tr := range sortedKeys(transports) {
		scopes, _ := transports[tr].(map[string]any)
		for _, sc := range sortedKeys(scopes) {
			if err := visitList(fmt.Sprintf("transports.%s[%s]", tr, strconv.Quote(sc)), scopes[sc]); err != nil {
				return err
			}
		}
	}
	return nil
}

func visitFields(req map[string]any, at string, fields []fileField, inline bool, fn func(PolicyFile) ([]byte, error)) error {
	for _, f := range fields {
		if f.path != "" {
			p, ok := req[f.path].(string)
			if !ok || p == "" {
				continue
			}
			data, err := fn(PolicyFile{Field: at + "." + f.path, Path: p, kind: f.kind})
			if err != nil {
				return err
			}
			if inline {
				delete(req, f.path)
				req[f.data] = data
			}
			continue
		}
		list, ok := req[f.paths].([]any)
		if !ok {
			continue
		}
		var datas [][]byte
		for i, v := range list {
			p, _ := v.(string)
			data, err := fn(PolicyFile{Field: fmt.Sprintf("%s.%s[%d]", at, f.paths, i), Path: p, kind: f.kind})
			if err != nil {
				return err
			}
			datas = append(datas, data)
		}
		if inline {
			delete(req, f.paths)
			if f.datas != "" {
				req[f.datas] = datas
			} else {
				req[f.data] = bytes.Join(datas, nil)
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// policyFileReader reads and checks the files a policy names on this
// machine, each (path and kind) once, and bounds what they add up to.
type policyFileReader struct {
	seen  map[PolicyFile][]byte
	total int64
}

func (r *policyFileReader) read(f PolicyFile) ([]byte, error) {
	key := PolicyFile{Path: f.Path, kind: f.kind}
	data, ok := r.seen[key]
	if !ok {
		if f.Path == "" {
			return nil, errors.New("an empty path")
		}
		raw, err := inputfile.Read(f.kind.what(), f.Path, f.kind.limit())
		if err != nil {
			return nil, err
		}
		if data, err = f.kind.check(raw); err != nil {
			return nil, fmt.Errorf("%s %s: %w", f.kind.what(), f.Path, err)
		}
		if r.seen == nil {
			r.seen = map[PolicyFile][]byte{}
		}
		r.seen[key] = data
	}
	r.total += int64(len(data))
	if r.total > maxPolicyFiles {
		return nil, fmt.Errorf("the files the policy names add up to more than %d bytes", maxPolicyFiles)
	}
	return data, nil
}

// inlinePolicyFiles reads and checks every file the policy (data, already
// parsed strictly) names, and returns the policy with their contents in
// place of the paths. Errors name the policy, the field and the file.
func inlinePolicyFiles(display string, data []byte) ([]byte, error) {
	tree, err := decodePolicyTree(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w: %s", display, ErrBadPolicy, oneLine(err.Error()))
	}
	var r policyFileReader
	err = tree.visitFiles(true, func(f PolicyFile) ([]byte, error) {
		data, err := r.read(f)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %s: %w", display, f.Field, err)
		}
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("policy %s: encoding it with the files inline: %w", display, err)
	}
	return out, nil
}

// CheckDevicePolicy checks the files a policy placed on a device names:
// each must be an absolute path; a file the build places itself (placed,
// by device path: the --verify-key keys) is checked as what the field
// wants; a file this machine has at that path is read through the gate
// and checked the same way (a named pipe, a device or a wrong kind of key
// there is refused); a file neither has is reported, for a warning: the
// device must hold it, or refuse every image its rule covers.
func CheckDevicePolicy(t *Trust, display string, placed map[string][]byte) (missing []PolicyFile, err error) {
	tree, err := decodePolicyTree(t.JSON)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w: %s", display, ErrBadPolicy, oneLine(err.Error()))
	}
	var r policyFileReader
	err = tree.visitFiles(false, func(f PolicyFile) ([]byte, error) {
		fail := func(err error) ([]byte, error) {
			return nil, fmt.Errorf("policy %s: %s: %w", display, f.Field, err)
		}
		if !filepath.IsAbs(f.Path) {
			return fail(fmt.Errorf("%q is not an absolute path: the device reads it from a directory nobody chose", f.Path))
		}
		if data, ok := placed[filepath.Clean(f.Path)]; ok {
			if _, err := f.kind.check(data); err != nil {
				return fail(fmt.Errorf("%s %s (placed by --verify-key): %w", f.kind.what(), f.Path, err))
			}
			return nil, nil
		}
		if _, err := os.Lstat(f.Path); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f)
			return nil, nil
		}
		if _, err := r.read(f); err != nil {
			return fail(err)
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return missing, nil
}
