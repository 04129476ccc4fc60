package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/examples/grpc/feedpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// dialGRPC opens a grpc-go client connection to addr over h2c.
func dialGRPC(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// follow opens a Follow stream from the cursor after.
func follow(t *testing.T, conn *grpc.ClientConn, after uint64) feedpb.Feed_FollowClient {
	t.Helper()
	stream, err := feedpb.NewFeedClient(conn).Follow(t.Context(), &feedpb.FollowRequest{After: after})
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// receive reads n messages of a Follow stream, as "seq:text" joined with spaces.
func receive(t *testing.T, stream feedpb.Feed_FollowClient, n int) string {
	t.Helper()
	var got []string
	for range n {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("Follow after %q: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d:%s", m.Seq, m.Text))
	}
	return strings.Join(got, " ")
}

// publishGRPC publishes text over gRPC and returns its number.
func publishGRPC(t *testing.T, conn *grpc.ClientConn, text string) uint64 {
	t.Helper()
	r, err := feedpb.NewFeedClient(conn).Publish(t.Context(), &feedpb.PublishRequest{Text: text})
	if err != nil {
		t.Fatalf("Publish %q: %v", text, err)
	}
	return r.Seq
}

// publishHTTP publishes text with POST /messages and returns its number.
func publishHTTP(t *testing.T, addr, text string) uint64 {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/messages", "text/plain", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Seq uint64 }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST /messages %q: %d, %v", text, resp.StatusCode, err)
	}
	return r.Seq
}

// poll makes a long poll, GET /messages?query, and returns its answer as receive does.
func poll(t *testing.T, addr, query string) (string, uint64) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/messages?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a pollAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /messages?%s: %d, %v", query, resp.StatusCode, err)
	}
	return answerString(a), a.Next
}

func answerString(a pollAnswer) string {
	var got []string
	for _, m := range a.Messages {
		got = append(got, fmt.Sprintf("%d:%s", m.Seq, m.Text))
	}
	return strings.Join(got, " ")
}

// TestFeedAcrossRestart: one topic over gRPC, a long poll and a WebSocket on one port, the
// messages published over gRPC and HTTP numbered in one sequence; on SIGTERM a Follow stream
// ends with UNAVAILABLE and the process exits; after a restart on the same -log, clients that
// follow again from their cursors miss nothing, those older than the new process's memory read
// from the log.
func TestFeedAcrossRestart(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "feed.jsonl")
	more, _ := json.Marshal([]string{"-log", logFile})
	t.Setenv("GRPC_MORE_ARGS", string(more))

	cmd := coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
	conn := dialGRPC(t, cmd.Addr)
	stream := follow(t, conn, 0)
	ws, _, err := websocket.Dial(t.Context(), "ws://"+cmd.Addr+"/messages/ws?after=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if got := readSocket(t, ws); got != "" {
		t.Fatalf("the socket's first message: %q, want the caught-up sign", got)
	}
	for i, text := range []string{"a", "b", "c", "d", "e"} {
		var seq uint64
		if i%2 == 0 {
			seq = publishGRPC(t, conn, text)
		} else {
			seq = publishHTTP(t, cmd.Addr, text)
		}
		if seq != uint64(i+1) {
			t.Fatalf("%q published as %d", text, seq)
		}
	}
	const all = "1:a 2:b 3:c 4:d 5:e"
	if got := receive(t, stream, 5); got != all {
		t.Fatalf("Follow: %s", got)
	}
	var socket []string
	for len(strings.Fields(strings.Join(socket, " "))) < 5 {
		socket = append(socket, readSocket(t, ws))
	}
	if got := strings.Join(socket, " "); got != all {
		t.Fatalf("the socket: %s", got)
	}
	if got, next := poll(t, cmd.Addr, "after=3"); got != "4:d 5:e" || next != 5 {
		t.Fatalf("a poll after 3: %s, next %d", got, next)
	}

	cmd.Terminate()
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("Follow at the shutdown: %v", err)
	}
	if _, _, err := ws.Read(t.Context()); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("the socket at the shutdown: %v", err)
	}
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}

	cmd = coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
	conn = dialGRPC(t, cmd.Addr)
	live, behind := follow(t, conn, 5), follow(t, conn, 2)
	if seq := publishGRPC(t, conn, "f"); seq != 6 {
		t.Fatalf("the first message after the restart is %d", seq)
	}
	if got := receive(t, live, 1); got != "6:f" {
		t.Fatalf("Follow from 5 after the restart: %s", got)
	}
	if got := receive(t, behind, 4); got != "3:c 4:d 5:e 6:f" {
		t.Fatalf("Follow from 2 after the restart: %s", got)
	}
	// A poll from before the process's memory is answered from the log, up to where the
	// memory begins; the next poll, from there.
	if got, next := poll(t, cmd.Addr, "after=0&timeout=0"); got != all || next != 5 {
		t.Fatalf("a poll of everything after the restart: %s, next %d", got, next)
	}
	if got, next := poll(t, cmd.Addr, "after=5&timeout=0"); got != "6:f" || next != 6 {
		t.Fatalf("the next poll: %s, next %d", got, next)
	}
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// readSocket reads one message of the socket, as receive does.
func readSocket(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	typ, data, err := ws.Read(t.Context())
	if err != nil || typ != websocket.MessageText {
		t.Fatalf("the socket: %v %v", typ, err)
	}
	var a pollAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("the socket's message %q: %v", data, err)
	}
	return answerString(a)
}

// TestShutdownEndsStreams: when the shutdown begins, a Health/Watch stream hears NOT_SERVING or
// ends at once with UNAVAILABLE, a Follow stream ends with UNAVAILABLE, and a unary call under
// way finishes; then the shutdown completes, with no deadline to end it.
func TestShutdownEndsStreams(t *testing.T) {
	msgs, err := openLog("", 10)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	// The interceptor holds Publish calls until the test releases them: a call under way.
	hold := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if info.FullMethod == feedpb.Feed_Publish_FullMethodName {
			close(started)
			<-release
		}
		return h(ctx, req)
	}
	a := newApp(msgs, grpc.UnaryInterceptor(hold))
	srv, addr := coretest.Serve(t, a.handler(), core.Options{})
	a.serve(srv)
	conn := dialGRPC(t, addr)

	watch, err := healthpb.NewHealthClient(conn).Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch: %v, %v", r, err)
	}
	stream := follow(t, conn, 0)
	published := make(chan error, 1)
	go func() {
		r, err := feedpb.NewFeedClient(conn).Publish(context.Background(), &feedpb.PublishRequest{Text: "late"})
		if err == nil && r.Seq != 1 {
			err = fmt.Errorf("published as %d", r.Seq)
		}
		published <- err
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()

	for {
		r, err := watch.Recv()
		if err == nil && r.Status == healthpb.HealthCheckResponse_NOT_SERVING {
			continue
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Watch at the shutdown: %v, %v", r, err)
		}
		break
	}
	// The Follow stream began before the message: it ends without it, or with it (the call
	// goes on while the streams end), then UNAVAILABLE.
	close(release)
	for {
		m, err := stream.Recv()
		if err == nil && m.Seq == 1 {
			continue
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Follow at the shutdown: %v, %v", m, err)
		}
		break
	}
	if err := <-published; err != nil {
		t.Fatalf("the call under way: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}
