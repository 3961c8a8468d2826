// Command azd-bench-driver plays azd's part for the benchmark the way azd 1.31.2 plays it: a
// grpc-go server on loopback built from azd's own module (its `pkg/azdext` messages and
// services, its `pkg/grpcbroker` message broker, which azd's ProvisioningService puts on every
// provisioning stream), HS256 extension tokens checked on every call, the gzip compressor
// registered. It starts each extension as azd does (`<bin> listen`, AZD_SERVER,
// AZD_ACCESS_TOKEN, the project's folder and environment), waits for ExtensionService/Ready, and
// sends Initialize, State and Deploy through the broker as azd's external provisioning
// provider does (SendAndWait, SendAndWaitWithProgress).
//
// Subjects take turns process by process (a, b, c, a, b, c, ...), and in the last round the
// State round trips take turns in slices, so that whatever else the machine does for a while
// weighs on every column alike. The first subject also gets one start
// before the rounds, on its empty cache: the "first start" row. Prints one Markdown table with
// each subject's ratio to the anchor (azd's Go SDK extension), and a line per subject saying
// which of the project's targets it meets.
//
//	azd-bench-driver -subjects subjects.json [-runs 20] [-requests 10000] [-progress 100000]
//
// subjects.json: [{"label": "...", "program": "...", "env": {"K": "V"}, "id": "...", "anchor": true},
// ...] (one anchor; id: the extension id its tokens name, default azd.wasm-host). scripts/bench.sh builds this and writes that file.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/azure/azure-dev/cli/azd/pkg/azdext"
	"github.com/azure/azure-dev/cli/azd/pkg/grpcbroker"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // azd registers it
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	providerName = "bench"
	defaultID    = "azd.wasm-host"
	// State round trips before the timed ones (connections and caches warm).
	warmup = 200
)

type subject struct {
	Label   string            `json:"label"`
	Program string            `json:"program"`
	Env     map[string]string `json:"env"`
	Anchor  bool              `json:"anchor"`
	// Floor marks the thinnest extension (host/cli/examples/floor_extension.rs): what azd's
	// side and the kernel cost a round trip; held to no target.
	Floor bool `json:"floor"`
	// ID is the extension id its tokens name (azd's: the installed extension's); default
	// azd.wasm-host.
	ID string `json:"id"`
}

type settings struct {
	runs, requests, progress int
	// How long a process idles after Ready before its RSS is read and its Initialize sent
	// (and after the Initialize, before the State that measures a request after an idle).
	idle time.Duration
}

// What one start of an extension measured.
type oneRun struct {
	ready, initialize, stateAfterIdle time.Duration
	idleRSSKiB                        int64
	// Page faults the process took during its Initialize, and during the State after an idle:
	// code and data touched for the first time (or again after the kernel reclaimed it).
	initFaults, stateFaults int64
}

type load struct {
	state []time.Duration // sorted
	// The process's own cost per timed State, all its threads: time on a CPU, and the times
	// one of its threads was switched in.
	cpuPerState      time.Duration
	switchesPerState float64
	progressRate     float64 // messages reported per second, Deploy sent → answered
	shown            int     // progress texts azd's broker handed to the spinner
	inOrder          bool
	lastShown        bool
	late             int64 // progress for the deploy's id after its answer, on the wire
	rssAfterKiB      int64
}

// ---- azd's server: ExtensionService and ProvisioningService, as azd serves them ----------------

type claims struct {
	Capabilities []string `json:"cap,omitempty"`
	jwt.RegisteredClaims
}

// server is one azd run's gRPC server: a key, a listener, and what the extension did.
type server struct {
	id      string
	key     []byte
	address string
	grpc    *grpc.Server
	ready   chan struct{}
	readyMu sync.Once
	broker  chan *grpcbroker.MessageBroker[azdext.ProvisioningMessage]
	// answered: request ids whose final answer arrived; late: progress for one of them after.
	answered sync.Map
	late     atomic.Int64
}

func (s *server) token() (string, error) {
	now := time.Now()
	c := claims{
		Capabilities: []string{"provisioning-provider"},
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    "azd",
			Subject:   s.id,
			Audience:  jwt.ClaimStrings{s.address},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
}

// authorize checks the call's token as azd does: HS256 with this run's key, issuer azd, this
// audience, not expired.
func (s *server) authorize(ctx context.Context) error {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok || len(md["authorization"]) == 0 {
		return status.Error(codes.Unauthenticated, "invalid token")
	}
	_, err := jwt.ParseWithClaims(md["authorization"][0], &claims{}, func(*jwt.Token) (any, error) {
		return s.key, nil
	}, jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("azd"), jwt.WithAudience(s.address),
		jwt.WithExpirationRequired())
	if err != nil {
		return status.Error(codes.Unauthenticated, "invalid token")
	}
	return nil
}

// watched sees every message the extension sends on the provisioning stream, to count
// progress that arrives after its request's answer (azd drops it).
type watched struct {
	grpc.ServerStream
	s *server
}

func (w *watched) RecvMsg(m any) error {
	err := w.ServerStream.RecvMsg(m)
	if msg, ok := m.(*azdext.ProvisioningMessage); ok && err == nil {
		if p := msg.GetProgressMessage(); p != nil {
			if _, done := w.s.answered.Load(msg.GetRequestId()); done {
				w.s.late.Add(1)
			}
		} else if msg.GetRequestId() != "" {
			w.s.answered.Store(msg.GetRequestId(), true)
		}
	}
	return err
}

type extensionService struct {
	azdext.UnimplementedExtensionServiceServer
	s *server
}

func (e *extensionService) Ready(context.Context, *azdext.ReadyRequest) (*azdext.ReadyResponse, error) {
	e.s.readyMu.Do(func() { close(e.s.ready) })
	return &azdext.ReadyResponse{}, nil
}

func (e *extensionService) ReportError(
	_ context.Context, r *azdext.ReportErrorRequest,
) (*azdext.ReportErrorResponse, error) {
	fmt.Fprintf(os.Stderr, "  extension reported: %s\n", r.GetError().GetMessage())
	return &azdext.ReportErrorResponse{}, nil
}

type provisioningService struct {
	azdext.UnimplementedProvisioningServiceServer
	s *server
}

// Stream is azd's ProvisioningService.Stream: a broker on the stream, a handler for the
// provider's registration, the broker's dispatcher until the stream ends.
func (p *provisioningService) Stream(stream azdext.ProvisioningService_StreamServer) error {
	// azd's logger is silent unless --debug; its broker still formats every line.
	broker := grpcbroker.NewMessageBroker(stream, azdext.NewProvisioningEnvelope(), p.s.id,
		log.New(io.Discard, "", 0))
	var once sync.Once
	err := broker.On(func(
		_ context.Context, req *azdext.RegisterProvisioningProviderRequest,
	) (*azdext.ProvisioningMessage, error) {
		if strings.TrimSpace(req.GetName()) == "" {
			return nil, status.Errorf(codes.InvalidArgument, "provider name cannot be empty")
		}
		if req.GetName() != providerName {
			return nil, status.Errorf(codes.InvalidArgument, "unexpected provider %q", req.GetName())
		}
		once.Do(func() { p.s.broker <- broker })
		return &azdext.ProvisioningMessage{
			MessageType: &azdext.ProvisioningMessage_RegisterProvisioningProviderResponse{
				RegisterProvisioningProviderResponse: &azdext.RegisterProvisioningProviderResponse{},
			},
		}, nil
	})
	if err != nil {
		return err
	}
	if err := broker.Run(stream.Context()); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("broker error: %w", err)
	}
	return nil
}

func startServer(id string) (*server, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &server{
		id:      id,
		key:     key,
		address: listener.Addr().String(),
		ready:   make(chan struct{}),
		broker:  make(chan *grpcbroker.MessageBroker[azdext.ProvisioningMessage], 1),
	}
	s.grpc = grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(
			ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler,
		) (any, error) {
			if err := s.authorize(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(
			srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler,
		) error {
			if err := s.authorize(ss.Context()); err != nil {
				return err
			}
			return h(srv, &watched{ServerStream: ss, s: s})
		}),
	)
	azdext.RegisterExtensionServiceServer(s.grpc, &extensionService{s: s})
	azdext.RegisterProvisioningServiceServer(s.grpc, &provisioningService{s: s})
	go func() { _ = s.grpc.Serve(listener) }()
	return s, nil
}

// ---- driving one process ----------------------------------------------------------------------

func rssKiB(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// faults is the count of page faults the process has taken (minor and major).
func faults(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// After the command's name, in parentheses: field 10 is minflt, 12 majflt (1-based).
	rest := string(raw)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 10 {
		return 0
	}
	minor, _ := strconv.ParseInt(f[7], 10, 64)
	major, _ := strconv.ParseInt(f[9], 10, 64)
	return minor + major
}

// cpuAndSwitches is the time every thread of the process has spent on a CPU, and how many times
// its threads were scheduled in (/proc/<pid>/task/*/schedstat: ns on CPU, ns waiting, slices).
func cpuAndSwitches(pid int) (time.Duration, int64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var cpu, slices int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(raw))
		if len(f) == 3 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			n, _ := strconv.ParseInt(f[2], 10, 64)
			cpu += ns
			slices += n
		}
	}
	return time.Duration(cpu), slices
}

func message(inner func(m *azdext.ProvisioningMessage)) *azdext.ProvisioningMessage {
	m := &azdext.ProvisioningMessage{RequestId: uuid.NewString()}
	inner(m)
	return m
}

func stateRequest() *azdext.ProvisioningMessage {
	return message(func(m *azdext.ProvisioningMessage) {
		m.MessageType = &azdext.ProvisioningMessage_StateRequest{StateRequest: &azdext.ProvisioningStateRequest{
			ProviderName: providerName, Options: &azdext.ProvisioningStateOptions{},
		}}
	})
}

// session is one extension process as azd starts it, with azd's server for it.
type session struct {
	sub     subject
	srv     *server
	cmd     *exec.Cmd
	exited  chan error
	stderr  *strings.Builder
	project string
	broker  *grpcbroker.MessageBroker[azdext.ProvisioningMessage]
	pid     int
	ctx     context.Context
	cancel  context.CancelFunc
	// What its load measured so far (the State round trips, unsorted; its CPU and switches).
	load *load
	cpu  time.Duration
	sw   int64
}

// startSession starts `sub` as azd does and measures its start: spawn → Ready, idle memory,
// the first Initialize, a State after an idle. The caller ends it.
func startSession(sub subject, s settings) (ss *session, r oneRun, err error) {
	id := sub.ID
	if id == "" {
		id = defaultID
	}
	ss = &session{sub: sub, exited: make(chan error, 1), stderr: &strings.Builder{}}
	ss.ctx, ss.cancel = context.WithTimeout(context.Background(), 600*time.Second)
	if ss.srv, err = startServer(id); err != nil {
		return ss, r, err
	}
	token, err := ss.srv.token()
	if err != nil {
		return ss, r, err
	}
	if ss.project, err = os.MkdirTemp("", "azd-bench-project-"); err != nil {
		return ss, r, err
	}
	ss.cmd = exec.Command(sub.Program, "listen")
	ss.cmd.Env = append(os.Environ(), "AZD_SERVER="+ss.srv.address, "AZD_ACCESS_TOKEN="+token,
		"AZD_CWD="+ss.project, "AZD_ENVIRONMENT=bench", "FORCE_COLOR=1")
	for k, v := range sub.Env {
		ss.cmd.Env = append(ss.cmd.Env, k+"="+v)
	}
	ss.cmd.Stderr = ss.stderr
	started := time.Now()
	if err := ss.cmd.Start(); err != nil {
		return ss, r, err
	}
	go func() { ss.exited <- ss.cmd.Wait() }()
	select {
	case <-ss.srv.ready:
	case e := <-ss.exited:
		ss.exited <- e
		return ss, r, fmt.Errorf("exited before Ready: %v", e)
	case <-time.After(15 * time.Second):
		return ss, r, errors.New("no Ready within 15 s (azd's limit)")
	}
	r.ready = time.Since(started)
	select {
	case ss.broker = <-ss.srv.broker:
	default:
		return ss, r, errors.New("Ready came before the provider registered")
	}
	ss.pid = ss.cmd.Process.Pid
	time.Sleep(s.idle)
	r.idleRSSKiB = rssKiB(ss.pid)
	keepSmaps(sub.Label, ss.pid)
	config, err := structpb.NewStruct(map[string]any{"progress": strconv.Itoa(s.progress)})
	if err != nil {
		return ss, r, err
	}
	init := message(func(m *azdext.ProvisioningMessage) {
		m.MessageType = &azdext.ProvisioningMessage_InitializeRequest{InitializeRequest: &azdext.ProvisioningInitializeRequest{
			ProjectPath: ss.project,
			Options:     &azdext.ProvisioningOptions{Provider: providerName, Config: config},
		}}
	})
	before := faults(ss.pid)
	t := time.Now()
	if _, err := ss.broker.SendAndWait(ss.ctx, init); err != nil {
		return ss, r, fmt.Errorf("initialize: %w", err)
	}
	r.initialize = time.Since(t)
	r.initFaults = faults(ss.pid) - before
	time.Sleep(s.idle)
	before = faults(ss.pid)
	t = time.Now()
	if _, err := ss.broker.SendAndWait(ss.ctx, stateRequest()); err != nil {
		return ss, r, fmt.Errorf("state: %w", err)
	}
	r.stateAfterIdle = time.Since(t)
	r.stateFaults = faults(ss.pid) - before
	return ss, r, nil
}

// end stops azd's server as azd ends every command (hard), waits for the process to go, and
// names the subject and its stderr in err.
func (ss *session) end(err error) error {
	if ss.srv != nil {
		ss.srv.grpc.Stop()
	}
	if ss.cmd != nil && ss.cmd.Process != nil {
		select {
		case <-ss.exited:
		case <-time.After(10 * time.Second):
			_ = ss.cmd.Process.Kill()
			<-ss.exited
		}
	}
	ss.cancel()
	if ss.project != "" {
		_ = os.RemoveAll(ss.project)
	}
	if err != nil {
		return fmt.Errorf("%s: %w; its stderr:\n%s", ss.sub.Label, err, ss.stderr.String())
	}
	return nil
}

func runOnce(sub subject, s settings) (oneRun, error) {
	ss, r, err := startSession(sub, s)
	return r, ss.end(err)
}

// keepSmaps keeps the process's /proc/<pid>/smaps in BENCH_SMAPS_DIR, if set: what its resident
// memory is made of, for a reading of the idle RSS row.
func keepSmaps(label string, pid int) {
	dir := os.Getenv("BENCH_SMAPS_DIR")
	if dir == "" {
		return
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return
	}
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" /()=", r) {
			return '-'
		}
		return r
	}, label)
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.smaps", name, pid)), raw, 0o644)
}

// states sends n State requests and keeps their round trips, and the process's CPU time and
// thread switches over them.
func (ss *session) states(n int) error {
	cpu0, sw0 := cpuAndSwitches(ss.pid)
	for i := 0; i < n; i++ {
		t := time.Now()
		resp, err := ss.broker.SendAndWait(ss.ctx, stateRequest())
		ss.load.state = append(ss.load.state, time.Since(t))
		if err != nil {
			return fmt.Errorf("state: %w", err)
		}
		out := resp.GetStateResponse().GetStateResult().GetState().GetOutputs()["GREETING"]
		if out.GetValue() != "hello" {
			return fmt.Errorf("state answered %v, not the fixed outputs", resp)
		}
	}
	cpu1, sw1 := cpuAndSwitches(ss.pid)
	ss.cpu += cpu1 - cpu0
	ss.sw += sw1 - sw0
	return nil
}

// deploy sends the one Deploy and reads how its progress reached azd's broker.
func (ss *session) deploy(s settings) error {
	l := ss.load
	var shown []int
	deploy := message(func(m *azdext.ProvisioningMessage) {
		m.MessageType = &azdext.ProvisioningMessage_DeployRequest{DeployRequest: &azdext.ProvisioningDeployRequest{
			ProviderName: providerName,
		}}
	})
	t := time.Now()
	resp, err := ss.broker.SendAndWaitWithProgress(ss.ctx, deploy, func(text string) {
		n, err := strconv.Atoi(text)
		if err != nil {
			n = math.MaxInt
		}
		shown = append(shown, n)
	})
	took := time.Since(t)
	if err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	if resp.GetDeployResponse().GetResult().GetDeployment() == nil {
		return fmt.Errorf("deploy answered without a deployment (azd would crash): %v", resp)
	}
	// Stragglers, so that late ones are counted.
	time.Sleep(200 * time.Millisecond)
	l.progressRate = float64(s.progress) / took.Seconds()
	l.shown = len(shown)
	l.inOrder = true // each shown after the one reported before it
	for i := 1; i < len(shown); i++ {
		l.inOrder = l.inOrder && shown[i] > shown[i-1]
	}
	l.lastShown = len(shown) > 0 && shown[len(shown)-1] == s.progress-1
	l.late = ss.srv.late.Load()
	l.rssAfterKiB = rssKiB(ss.pid)
	return nil
}

// loadRound is the last round: every subject started and kept running, then the State round
// trips in slices taking turns (a slice of each, then the next slice of each, ...), so that a
// busy moment of the machine weighs on every column alike, then each one's Deploy.
func loadRound(subjects []subject, s settings, all []gathered) error {
	sessions := make([]*session, 0, len(subjects))
	defer func() {
		for _, ss := range sessions {
			_ = ss.end(nil)
		}
	}()
	for j, sub := range subjects {
		ss, r, err := startSession(sub, s)
		if err != nil {
			return ss.end(err)
		}
		all[j].add(r)
		ss.load = &load{state: make([]time.Duration, 0, s.requests)}
		sessions = append(sessions, ss)
	}
	for _, ss := range sessions {
		if err := ss.states(warmup); err != nil {
			return fmt.Errorf("%s: %w", ss.sub.Label, err)
		}
		ss.load.state, ss.cpu, ss.sw = ss.load.state[:0], 0, 0
	}
	const slices = 20
	for k := 0; k < slices; k++ {
		for _, ss := range sessions {
			n := s.requests / slices
			if k == slices-1 {
				n = s.requests - n*(slices-1)
			}
			if err := ss.states(n); err != nil {
				return fmt.Errorf("%s: %w", ss.sub.Label, err)
			}
		}
	}
	for j, ss := range sessions {
		l := ss.load
		l.cpuPerState = ss.cpu / time.Duration(s.requests)
		l.switchesPerState = float64(ss.sw) / float64(s.requests)
		sort.Slice(l.state, func(a, b int) bool { return l.state[a] < l.state[b] })
		if err := ss.deploy(s); err != nil {
			return fmt.Errorf("%s: %w", ss.sub.Label, err)
		}
		all[j].load = l
	}
	return nil
}

// ---- gathering and printing ---------------------------------------------------------------------

type gathered struct {
	ready, init, afterIdle []time.Duration
	rss                    []int64
	initFaults, stFaults   []int64
	load                   *load
	first                  *oneRun
}

func (g *gathered) add(r oneRun) {
	g.ready = append(g.ready, r.ready)
	g.init = append(g.init, r.initialize)
	g.afterIdle = append(g.afterIdle, r.stateAfterIdle)
	g.rss = append(g.rss, r.idleRSSKiB)
	g.initFaults = append(g.initFaults, r.initFaults)
	g.stFaults = append(g.stFaults, r.stateFaults)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Round(float64(len(sorted)-1) * p))
	return sorted[min(i, len(sorted)-1)]
}

func median(d []time.Duration) time.Duration {
	c := append([]time.Duration(nil), d...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return percentile(c, 0.5)
}

func medianInt(v []int64) int64 {
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Nanoseconds())/1e6) }
func mib(kib int64) string      { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// A row: a label, and per subject its value (a number for the ratio) and how it is shown.
type row struct {
	label          string
	value          func(*gathered) float64
	show           func(*gathered) string
	higherIsBetter bool
	// target is the ratio to the anchor a subject must reach (0: none).
	target float64
	// progress: a row of the Deploy's progress, which the floor does not pace.
	progress bool
}

func main() {
	subjectsPath := flag.String("subjects", "", "JSON list of the extensions to drive")
	runs := flag.Int("runs", 20, "processes started per subject")
	requests := flag.Int("requests", 10000, "timed State round trips")
	progress := flag.Int("progress", 100000, "progress messages of the one Deploy")
	idle := flag.Duration("idle", 100*time.Millisecond, "idle after Ready, and after Initialize")
	flag.Parse()
	raw, err := os.ReadFile(*subjectsPath)
	if err != nil {
		fail(fmt.Errorf("-subjects: %w", err))
	}
	var subjects []subject
	if err := json.Unmarshal(raw, &subjects); err != nil {
		fail(fmt.Errorf("%s: %w", *subjectsPath, err))
	}
	anchor := -1
	for i, sub := range subjects {
		if sub.Anchor {
			anchor = i
		}
	}
	if len(subjects) == 0 || anchor < 0 {
		fail(errors.New("the subjects need one anchor (the Go SDK extension)"))
	}
	s := settings{runs: max(*runs, 1), requests: max(*requests, 1), progress: max(*progress, 1), idle: *idle}
	all := make([]gathered, len(subjects))
	first, err := runOnce(subjects[0], s)
	if err != nil {
		fail(err)
	}
	all[0].first = &first
	fmt.Fprintf(os.Stderr, "azd 1.31.2's broker and server (grpc-go) driving %d subjects, %d processes each, in turn\n",
		len(subjects), s.runs)
	for i := 0; i+1 < s.runs; i++ {
		for j, sub := range subjects {
			r, err := runOnce(sub, s)
			if err != nil {
				fail(err)
			}
			all[j].add(r)
		}
		fmt.Fprintf(os.Stderr, "  round %d/%d\n", i+1, s.runs)
	}
	if err := loadRound(subjects, s, all); err != nil {
		fail(err)
	}
	printTable(subjects, all, anchor, s)
	bad := 0
	for j := range subjects {
		if l := all[j].load; j != anchor && !subjects[j].Floor && !(l.inOrder && l.lastShown && l.late == 0) {
			fmt.Fprintf(os.Stderr, "%s broke the progress guarantee\n", subjects[j].Label)
			bad++
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

func rows(s settings) []row {
	d := func(f func(*gathered) time.Duration) func(*gathered) float64 {
		return func(g *gathered) float64 { return f(g).Seconds() }
	}
	return []row{
		{label: fmt.Sprintf("spawn → Ready (median of %d)", s.runs), target: 0.2,
			value: d(func(g *gathered) time.Duration { return median(g.ready) }),
			show:  func(g *gathered) string { return ms(median(g.ready)) }},
		{label: fmt.Sprintf("Initialize round trip (median of %d)", s.runs), target: 0.5,
			value: d(func(g *gathered) time.Duration { return median(g.init) }),
			show:  func(g *gathered) string { return us(median(g.init)) }},
		{label: fmt.Sprintf("State round trip after a %v idle (median of %d)", s.idle, s.runs),
			value: d(func(g *gathered) time.Duration { return median(g.afterIdle) }),
			show:  func(g *gathered) string { return us(median(g.afterIdle)) }},
		{label: fmt.Sprintf("page faults during that Initialize, and that State (medians of %d)", s.runs),
			show: func(g *gathered) string {
				return fmt.Sprintf("%d, %d", medianInt(g.initFaults), medianInt(g.stFaults))
			}},
		{label: fmt.Sprintf("State round trip p50 (%d)", s.requests), target: 0.6,
			value: d(func(g *gathered) time.Duration { return percentile(g.load.state, 0.5) }),
			show:  func(g *gathered) string { return us(percentile(g.load.state, 0.5)) }},
		{label: "State round trip p99", target: 0.6,
			value: d(func(g *gathered) time.Duration { return percentile(g.load.state, 0.99) }),
			show:  func(g *gathered) string { return us(percentile(g.load.state, 0.99)) }},
		{label: "the extension's CPU time per State, all threads (and threads switched in)",
			value: func(g *gathered) float64 { return g.load.cpuPerState.Seconds() },
			show: func(g *gathered) string {
				return fmt.Sprintf("%s (%.1f)", us(g.load.cpuPerState), g.load.switchesPerState)
			}},
		{label: fmt.Sprintf("progress, Deploy × %d", s.progress), target: 2, higherIsBetter: true, progress: true,
			value: func(g *gathered) float64 { return g.load.progressRate },
			show: func(g *gathered) string {
				return fmt.Sprintf("%.0fk msg/s (%d shown)", g.load.progressRate/1e3, g.load.shown)
			}},
		{label: "progress as azd's broker hands it on", progress: true,
			show: func(g *gathered) string {
				yes := func(b bool) string {
					if b {
						return "yes"
					}
					return "NO"
				}
				return fmt.Sprintf("in order: %s, last shown: %s, after the answer: %d",
					yes(g.load.inOrder), yes(g.load.lastShown), g.load.late)
			}},
		{label: fmt.Sprintf("idle RSS after Ready (median of %d)", s.runs), target: 0.3,
			value: func(g *gathered) float64 { return float64(medianInt(g.rss)) },
			show:  func(g *gathered) string { return mib(medianInt(g.rss)) }},
		{label: "RSS after the State and Deploy runs",
			value: func(g *gathered) float64 { return float64(g.load.rssAfterKiB) },
			show:  func(g *gathered) string { return mib(g.load.rssAfterKiB) }},
	}
}

func printTable(subjects []subject, all []gathered, anchor int, s settings) {
	header := []string{"measurement"}
	for _, sub := range subjects {
		header = append(header, sub.Label)
	}
	fmt.Println("| " + strings.Join(header, " | ") + " |")
	fmt.Println("|" + strings.Repeat("---|", len(header)))
	missed := make([][]string, len(subjects))
	for _, r := range rows(s) {
		cells := []string{r.label}
		for j := range subjects {
			cell := r.show(&all[j])
			if subjects[j].Floor && r.progress {
				cell = "–"
			} else if r.value != nil && j != anchor {
				ratio := r.value(&all[j]) / math.Max(r.value(&all[anchor]), math.SmallestNonzeroFloat64)
				cell += fmt.Sprintf(" (%.2f×)", ratio)
				if r.target > 0 && !subjects[j].Floor && ((r.higherIsBetter && ratio < r.target) || (!r.higherIsBetter && ratio > r.target)) {
					op := "≤"
					if r.higherIsBetter {
						op = "≥"
					}
					missed[j] = append(missed[j], fmt.Sprintf("%s: %.3f× (target %s %.1f×)", r.label, ratio, op, r.target))
				}
			}
			cells = append(cells, cell)
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
	if f := all[0].first; f != nil {
		fmt.Printf("\nFirst start of %s (its empty cache): spawn → Ready %s, then Initialize %s.\n",
			subjects[0].Label, ms(f.ready), us(f.initialize))
	}
	fmt.Println()
	floorAt := -1
	for j, sub := range subjects {
		if sub.Floor {
			floorAt = j
		}
	}
	for j, sub := range subjects {
		if j == anchor || sub.Floor {
			continue
		}
		if floorAt >= 0 {
			fmt.Printf("- %s above the floor (its own work): %s\n", sub.Label,
				aboveFloor(&all[j], &all[anchor], &all[floorAt]))
		}
		if len(missed[j]) == 0 {
			fmt.Printf("- %s: every target met.\n", sub.Label)
		} else {
			fmt.Printf("- %s: missed %s.\n", sub.Label, strings.Join(missed[j], "; "))
		}
	}
}

// aboveFloor: what a subject adds to the floor's round trips, beside what the anchor adds.
func aboveFloor(g, anchor, floor *gathered) string {
	var parts []string
	for _, c := range []struct {
		what string
		of   func(*gathered) time.Duration
	}{
		{"Initialize", func(x *gathered) time.Duration { return median(x.init) }},
		{"State p50", func(x *gathered) time.Duration { return percentile(x.load.state, 0.5) }},
		{"State p99", func(x *gathered) time.Duration { return percentile(x.load.state, 0.99) }},
	} {
		ours, theirs := c.of(g)-c.of(floor), c.of(anchor)-c.of(floor)
		part := fmt.Sprintf("%s %s against %s", c.what, us(ours), us(theirs))
		if theirs > 0 {
			part += fmt.Sprintf(" (%.2f×)", float64(ours)/float64(theirs))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "azd-bench-driver: %v\n", err)
	os.Exit(1)
}
