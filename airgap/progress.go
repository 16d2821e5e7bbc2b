package airgap

// Progress follows a mirror. Calls come from several goroutines; an
// implementation serializes what it needs to.
type Progress interface {
	// Start is called once every manifest is read: the bytes each image
	// needs in the destination, and the unique bytes of all of them.
	Start(images []ImageBytes, total int64)
	// Add reports n more bytes in the destination (fetched or found
	// present) for blob bytes shared by the images listed; n is negative
	// when a failed attempt's bytes are taken back.
	Add(n int64, images []int)
	// Done is called when image i is complete in the destination, or has
	// failed with err.
	Done(i int, err error)
	// Stop is called last, before Mirror returns.
	Stop()
}

// ImageBytes is an image's size for progress.
type ImageBytes struct {
	Ref   string
	Bytes int64
}

// NopProgress reports nothing.
type NopProgress struct{}

func (NopProgress) Start([]ImageBytes, int64) {}
func (NopProgress) Add(int64, []int)          {}
func (NopProgress) Done(int, error)           {}
func (NopProgress) Stop()                     {}

var _ Progress = NopProgress{}
