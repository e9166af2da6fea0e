package buildkitclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/moby/buildkit/client"
	gatewaypb "github.com/moby/buildkit/frontend/gateway/pb"
	"github.com/moby/buildkit/solver/errdefs"
	"github.com/moby/buildkit/util/progress/progressui"
	digest "github.com/opencontainers/go-digest"
)

// showProgress renders the solve's statuses as BuildKit's plain progress
// (the lines `docker buildx build --progress=plain` prints: "#5 [2/3] RUN
// ...", the step's output, "#5 DONE 0.4s", "#5 ERROR: ...") with one
// {"log": line} per line, and remembers the steps' names for errors.
func (o *output) showProgress(statuses <-chan *client.SolveStatus) error {
	lines := &lineWriter{emit: o.log}
	display, err := progressui.NewDisplay(lines, progressui.PlainMode)
	if err != nil {
		for range statuses { //nolint:revive // drain so that the solve never blocks
		}
		return err
	}
	forward := make(chan *client.SolveStatus)
	go func() {
		defer close(forward)
		for s := range statuses {
			o.vertices.record(s)
			forward <- s
		}
	}()
	_, err = display.UpdateFrom(context.Background(), forward)
	lines.flush()
	return err
}

// lineWriter turns written bytes into whole lines.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		// The plain display separates steps with blank lines; they say nothing here.
		if line := strings.TrimRight(string(w.buf.Next(i+1)), "\r\n"); line != "" {
			w.emit(line)
		}
	}
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.emit(strings.TrimRight(w.buf.String(), "\r\n"))
		w.buf.Reset()
	}
}

// vertexNames remembers each step's name ("[2/3] RUN make") by digest, and
// the last step that failed.
type vertexNames struct {
	mu     sync.Mutex
	names  map[digest.Digest]string
	failed string
}

func (v *vertexNames) record(s *client.SolveStatus) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.names == nil {
		v.names = map[digest.Digest]string{}
	}
	for _, vx := range s.Vertexes {
		if vx.Name != "" {
			v.names[vx.Digest] = vx.Name
		}
		if vx.Error != "" && !strings.Contains(vx.Error, context.Canceled.Error()) {
			v.failed = vx.Name
		}
	}
}

func (v *vertexNames) name(d string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if n, ok := v.names[digest.Digest(d)]; ok {
		return n
	}
	return v.failed
}

// describe makes the one-line error of a failed build: the failing step,
// its place in the Dockerfile, the cause, and the process's exit code when a
// command failed.
func describe(err error, vertices *vertexNames) (string, *uint32) {
	var unreach *unreachableError
	if errors.As(err, &unreach) {
		return unreach.msg, nil
	}
	msg := oneLine(err.Error())
	msg = strings.TrimPrefix(msg, "failed to solve: ")
	var exitCode *uint32
	var exit *gatewaypb.ExitError
	if errors.As(err, &exit) {
		code := exit.ExitCode
		exitCode = &code
	}
	step := ""
	var verr *errdefs.VertexError
	if errors.As(err, &verr) && verr.Vertex != nil {
		step = vertices.name(verr.Digest)
	}
	where := ""
	for _, src := range errdefs.Sources(err) {
		if src.Info != nil && len(src.Ranges) > 0 && src.Ranges[0].Start != nil {
			where = fmt.Sprintf("%s:%d", src.Info.Filename, src.Ranges[0].Start.Line)
		}
	}
	switch {
	case step != "" && where != "":
		return fmt.Sprintf("%s (%s): %s", step, where, msg), exitCode
	case step != "":
		return fmt.Sprintf("%s: %s", step, msg), exitCode
	case where != "":
		return fmt.Sprintf("%s: %s", where, msg), exitCode
	}
	return msg, exitCode
}
