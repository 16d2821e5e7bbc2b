package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/microshift-compose/microshift-compose/airgap"
)

// newProgress picks how mirror reports progress on stderr: bars on a
// terminal, one plain line per image otherwise, nothing with --quiet.
func newProgress(stderr io.Writer, quiet bool) airgap.Progress {
	if quiet {
		return airgap.NopProgress{}
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{out: stderr}
	}
	return &lineProgress{out: stderr}
}

// lineProgress prints a line per finished image: what a CI log wants.
type lineProgress struct {
	out    io.Writer
	mu     sync.Mutex
	images []airgap.ImageBytes
	done   int
}

func (p *lineProgress) Start(images []airgap.ImageBytes, _ int64) { p.images = images }
func (p *lineProgress) Add(int64, []int)                          {}
func (p *lineProgress) Stop()                                     {}

func (p *lineProgress) Done(i int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if err != nil {
		fmt.Fprintf(p.out, "mirror: [%d/%d] failed %s\n", p.done, len(p.images), p.images[i].Ref)
		return
	}
	fmt.Fprintf(p.out, "mirror: [%d/%d] %s (%s)\n", p.done, len(p.images), p.images[i].Ref, humanBytes(p.images[i].Bytes))
}

// barProgress draws an overall bar and a bar per image being copied
// (mpb), each image's bar removed when it completes.
type barProgress struct {
	out    io.Writer
	mu     sync.Mutex
	p      *mpb.Progress
	total  *mpb.Bar
	images []airgap.ImageBytes
	bars   []*mpb.Bar
	cur    []int64
	all    int64
}

func (p *barProgress) Start(images []airgap.ImageBytes, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.images = images
	p.bars = make([]*mpb.Bar, len(images))
	p.cur = make([]int64, len(images))
	p.p = mpb.New(mpb.WithOutput(p.out), mpb.WithWidth(100))
	p.total = p.p.AddBar(total,
		mpb.BarPriority(-1),
		mpb.PrependDecorators(decor.Name(fmt.Sprintf("%d images", len(images)), decor.WC{W: 14, C: decor.DindentRight})),
		mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f"), decor.Name("  "), decor.AverageSpeed(decor.SizeB1024(0), "% .1f")),
	)
}

func (p *barProgress) bar(i int) *mpb.Bar {
	if p.bars[i] == nil {
		p.bars[i] = p.p.AddBar(p.images[i].Bytes,
			mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Name(shorten(p.images[i].Ref, 40), decor.WC{W: 42, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f")),
		)
	}
	return p.bars[i]
}

func (p *barProgress) Add(n int64, images []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.all += n
	p.total.SetCurrent(p.all)
	for _, i := range images {
		p.cur[i] += n
		p.bar(i).SetCurrent(p.cur[i])
	}
}

func (p *barProgress) Done(i int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bar(i)
	if err != nil {
		b.Abort(true)
		return
	}
	b.SetTotal(-1, true)
}

func (p *barProgress) Stop() {
	p.mu.Lock()
	if p.p == nil {
		p.mu.Unlock()
		return
	}
	for _, b := range p.bars {
		if b != nil && !b.Completed() {
			b.Abort(true)
		}
	}
	p.total.SetTotal(-1, true)
	p.mu.Unlock()
	p.p.Wait()
}

// shorten names an image in a bar: the last part of its repository and
// the start of its digest (or its tag), which tell the images of a plan
// apart, cut to n characters.
func shorten(ref string, n int) string {
	repo, id := ref, ""
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		repo, id = ref[:i], ref[i:]
		if len(id) > len("@sha256:")+12 {
			id = id[:len("@sha256:")+12]
		}
	} else if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo, id = ref[:i], ref[i:]
	}
	s := repo[strings.LastIndex(repo, "/")+1:] + id
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

// humanBytes formats n in binary units: 0 B, 512 B, 1.5 KiB, 12.3 MiB.
func humanBytes(n int64) string {
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 && f > -1024 || u == "TiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}

var (
	_ airgap.Progress = (*lineProgress)(nil)
	_ airgap.Progress = (*barProgress)(nil)
)
