package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/releases"
)

// operatorOptions choose operators out of a file-based catalog image
// (build, resolve, images, matrix): --operator-catalog and --operator.
type operatorOptions struct {
	Catalog   string
	Operators []string
	// reg is how a registry's catalog is read: the command's registry
	// flags (build's), else what podman reads (auth files,
	// registries.conf, certs.d).
	reg *registryOptions

	choices []operators.Choice
	ref     operators.Ref
	mu      sync.Mutex
	opened  map[releases.Arch]*catalogLoad
}

// catalogLoad is the catalog opened for one arch, once.
type catalogLoad struct {
	once sync.Once
	c    *operators.Catalog
	err  error
}

func (o *operatorOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Catalog, "operator-catalog", "", "file-based operator catalog image the --operator packages come from: oci:DIR[:NAME] or oci-archive:FILE[:NAME] (read on this machine, offline) or docker://REFERENCE (read from its registry; a tag is resolved to a digest, which the lock records)")
	f.StringArrayVar(&o.Operators, "operator", nil, "operator to install from --operator-catalog, with the bundles it requires: "+operators.ChoiceSyntax+" (default: the package's default channel, the channel's head, approval Automatic, the namespace its CSV suggests or the package's name; repeat)")
}

// Validate parses the choices and the catalog reference.
func (o *operatorOptions) Validate() error {
	o.choices = nil
	for _, s := range o.Operators {
		c, err := operators.ParseChoice(s)
		if err != nil {
			return usageError{fmt.Errorf("--operator: %w", err)}
		}
		o.choices = append(o.choices, c)
	}
	switch {
	case len(o.choices) > 0 && o.Catalog == "":
		return usageError{errors.New("--operator needs --operator-catalog: the file-based catalog image (oci:DIR, oci-archive:FILE or docker://REFERENCE) the operator comes from")}
	case len(o.choices) == 0 && o.Catalog != "":
		return usageError{errors.New("--operator-catalog without --operator: name the packages to install (--operator PACKAGE)")}
	case o.Catalog == "":
		return nil
	}
	ref, err := operators.ParseRef(o.Catalog)
	if err != nil {
		return usageError{err}
	}
	o.ref = ref
	return nil
}

// enabled reports whether operators were asked for.
func (o *operatorOptions) enabled() bool { return len(o.choices) > 0 }

// forArch opens the catalog for arch, once per arch (a matrix's cells of
// one arch share it).
func (o *operatorOptions) forArch(ctx context.Context, arch releases.Arch) (*operators.Catalog, error) {
	o.mu.Lock()
	if o.opened == nil {
		o.opened = map[releases.Arch]*catalogLoad{}
	}
	l := o.opened[arch]
	if l == nil {
		l = &catalogLoad{}
		o.opened[arch] = l
	}
	o.mu.Unlock()
	l.once.Do(func() {
		var rc registryclient.Options
		if o.ref.Transport == operators.TransportDocker {
			if o.reg != nil {
				rc, l.err = o.reg.client()
			} else {
				rc, l.err = registryclient.Options{}.Prepare()
			}
			if l.err != nil {
				return
			}
		}
		l.c, l.err = operators.Load(ctx, o.ref, arch, operators.OpenOptions{Registry: rc})
	})
	return l.c, l.err
}

// request returns the adjust function that puts the operators into a
// request, the catalog opened for its arch.
func (o *operatorOptions) request(ctx context.Context) func(*compose.Request) error {
	return func(req *compose.Request) error {
		if !o.enabled() {
			return nil
		}
		c, err := o.forArch(ctx, req.Arch)
		if err != nil {
			return err
		}
		req.Operators = &compose.OperatorRequest{Catalog: c, Choices: o.choices}
		return nil
	}
}

// close releases the catalogs: a registry's layers fetched into a
// temporary directory. Build closes them once the output is written (it
// copies layers from them).
func (o *operatorOptions) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, l := range o.opened {
		if l.c != nil {
			l.c.Close()
		}
	}
	o.opened = nil
}
