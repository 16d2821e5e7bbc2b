package components_test

import (
	"io/fs"

	"github.com/microshift-compose/microshift-compose/components"
)

func fsReadFile(c *components.Component, name string) (string, error) {
	b, err := fs.ReadFile(c.FS, name)
	return string(b), err
}
