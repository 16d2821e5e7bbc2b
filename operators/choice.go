package operators

import (
	"errors"
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan/request"
)

// Install plan approvals, as OLM spells them.
const (
	ApprovalAutomatic = "Automatic"
	ApprovalManual    = "Manual"
)

// Choice is an operator asked for: a package, and optionally its channel
// (the package's default otherwise), a version range (the channel's head
// otherwise), the install plan approval of its Subscription (Automatic
// otherwise) and the namespace it is installed in (the one its CSV
// suggests, or the package's name, otherwise).
type Choice struct {
	Package   string `json:"package"`
	Channel   string `json:"channel,omitempty"`
	Versions  string `json:"versions,omitempty"`
	Approval  string `json:"approval,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// ChoiceSyntax is how --operator is written.
const ChoiceSyntax = "PACKAGE[:CHANNEL][@VERSION-RANGE][,approval=Automatic|Manual][,namespace=NS]"

// ErrChoice is wrapped by the error for a choice that does not parse.
var ErrChoice = errors.New("not an operator choice")

// ParseChoice parses --operator's value: PACKAGE[:CHANNEL][@RANGE] and
// options after commas (approval=, namespace=). A comma that starts no
// option belongs to the range (">=1.0.0, <2.0.0").
func ParseChoice(s string) (Choice, error) {
	if text.HasUnsafe(s) {
		return Choice{}, fmt.Errorf("%w: %s holds a control character", ErrChoice, text.QuoteExcerpt(s))
	}
	o, spelling := request.SplitOperator(s)
	if spelling.Twice != "" {
		return Choice{}, fmt.Errorf("%w: %s: %s given twice", ErrChoice, text.QuoteExcerpt(s), spelling.Twice)
	}
	c := Choice(o)
	err := c.Check()
	switch {
	case err != nil:
	case spelling.HasRange && c.Versions == "":
		err = errors.New("an empty version range after the @")
	case spelling.HasChannel && c.Channel == "":
		err = errors.New("an empty channel after the colon")
	}
	if err != nil {
		return Choice{}, fmt.Errorf("%w: %s: %v (want %s)", ErrChoice, text.QuoteExcerpt(s), err, ChoiceSyntax)
	}
	return c, nil
}

// Check refuses a choice that names no package or whose parts are not
// what they are for.
func (c Choice) Check() error {
	switch {
	case c.Package == "":
		return errors.New("no package")
	case strings.ContainsAny(c.Package, ":@, /"):
		return fmt.Errorf("package %s is not a package name", text.QuoteExcerpt(c.Package))
	case strings.ContainsAny(c.Channel, ":@,/"):
		return fmt.Errorf("channel %s is not a channel name", text.QuoteExcerpt(c.Channel))
	}
	if c.Versions != "" {
		if _, err := ParseRange(c.Versions); err != nil {
			return err
		}
	}
	switch c.Approval {
	case "", ApprovalAutomatic, ApprovalManual:
	default:
		return fmt.Errorf("approval %s: want %s or %s", text.QuoteExcerpt(c.Approval), ApprovalAutomatic, ApprovalManual)
	}
	if c.Namespace != "" {
		if err := k8sname.Namespace(c.Namespace); err != nil {
			return err
		}
	}
	return nil
}

// String is the choice as --operator takes it.
func (c Choice) String() string { return request.Operator(c).FlagValue() }
