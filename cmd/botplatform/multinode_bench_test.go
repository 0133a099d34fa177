package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/harness"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// BenchmarkMultiNode compares three serve processes with one, on the same
// PostgreSQL server, machine and run, each deployment on a database of its
// own (a schema would not do: a notification wakes every listening
// connection of its database): createMessage throughput by chat users (32
// clients over 100 conversations, each listened to, as
// BenchmarkCreateMessage), then the echo bot's round trip at 200 messages
// per second (as BenchmarkEchoRoundTrip). Each message goes to the next
// server in turn, and the conversations' listeners are spread over the
// servers too, so most signals cross from one server to another. The
// servers of a deployment share one data directory (these calls use none
// of it).
//
// Both deployments run from the start, and createMessage alternates
// between them in bursts (one, three, three, one, …), so that whatever
// else the machine does weighs on both alike; the deployment not measured
// is stopped meanwhile (SIGSTOP), so that it takes no CPU. It reports each
// one's messages per second and their ratio.
//
//	BOTPLATFORM_TEST_DATABASE_URL=postgres://… go test -run '^$' -bench MultiNode -benchtime 24000x ./cmd/botplatform/
func BenchmarkMultiNode(b *testing.B) {
	deployments := []*deployment{startDeployment(b, 1), startDeployment(b, 3)}
	b.Run("createMessage", func(b *testing.B) {
		const bursts = 8
		var sent [2]int64
		var elapsed [2]time.Duration
		var nodesCPU, machineCPU [2]time.Duration
		loads := make([]func(count int64) time.Duration, len(deployments))
		for k, d := range deployments {
			loads[k] = d.messageLoad(b)
		}
		defer deployments[0].resume(b)
		defer deployments[1].resume(b)
		b.ResetTimer()
		for r := range bursts {
			count := int64(b.N) / bursts
			if r < b.N%bursts {
				count++
			}
			for j := range deployments {
				k := j
				if r%2 == 1 {
					k = len(deployments) - 1 - j
				}
				deployments[1-k].pause(b)
				deployments[k].resume(b)
				nodes0, machine0 := deployments[k].cpu()
				elapsed[k] += loads[k](count)
				nodes1, machine1 := deployments[k].cpu()
				nodesCPU[k] += nodes1 - nodes0
				machineCPU[k] += machine1 - machine0
				sent[k] += count
			}
		}
		rate := func(k int) float64 { return float64(sent[k]) / elapsed[k].Seconds() }
		b.ReportMetric(rate(0), "msg/s-1node")
		b.ReportMetric(rate(1), "msg/s-3nodes")
		b.ReportMetric(rate(1)/rate(0), "3vs1")
		// Where the CPU went: the serve processes', and the whole
		// machine's (PostgreSQL and this load generator besides).
		perMsg := func(d [2]time.Duration, k int) float64 { return float64(d[k].Microseconds()) / float64(sent[k]) }
		b.ReportMetric(perMsg(nodesCPU, 0), "node-µs/msg-1node")
		b.ReportMetric(perMsg(nodesCPU, 1), "node-µs/msg-3nodes")
		b.ReportMetric(perMsg(machineCPU, 0), "busy-µs/msg-1node")
		b.ReportMetric(perMsg(machineCPU, 1), "busy-µs/msg-3nodes")
	})
	for k, d := range deployments {
		d.deploy(b, echoCode) // after: its replies would double createMessage's signals
		b.Run(fmt.Sprintf("echo/nodes=%d", len(d.webhooks)), func(b *testing.B) {
			deployments[1-k].pause(b)
			defer deployments[1-k].resume(b)
			echoRoundTrip(b, d.benchServer, d.webhooks)
		})
	}
}

// deployment is nodes serve processes on one fresh PostgreSQL database.
type deployment struct {
	*benchServer               // the first node
	webhooks     []string      // the bot's Chat API base URL on each node
	procs        []*os.Process // the nodes
}

// pause stops the deployment's processes (SIGSTOP); resume continues them.
func (d *deployment) pause(b *testing.B)  { d.signal(b, syscall.SIGSTOP) }
func (d *deployment) resume(b *testing.B) { d.signal(b, syscall.SIGCONT) }

func (d *deployment) signal(b *testing.B, sig syscall.Signal) {
	for _, p := range d.procs {
		if err := p.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			b.Fatal(err)
		}
	}
}

// cpu is the CPU time the deployment's processes have used so far, and the
// machine's busy time (every CPU's, from /proc/stat); zero where /proc
// cannot be read.
func (d *deployment) cpu() (nodes, machine time.Duration) {
	for _, p := range d.procs {
		t, _ := harness.CPUTime(p.Pid)
		nodes += t
	}
	return nodes, machineBusy() * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// machineBusy is every CPU's non-idle time in clock ticks, from /proc/stat.
func machineBusy() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var busy int64
	for i, v := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return time.Duration(busy)
}

func startDeployment(b *testing.B, nodes int) *deployment {
	dbURL := storetest.PostgresDatabaseURL(b)
	s := startBenchServer(b, "--database-url", dbURL)
	d := &deployment{benchServer: s, webhooks: []string{s.webhook}, procs: []*os.Process{s.cmd.Process}}
	path := strings.TrimPrefix(s.webhook, s.url)
	for range nodes - 1 {
		cmd, url := startBenchProcess(b, s.bin, s.data, "--database-url", dbURL)
		d.webhooks = append(d.webhooks, url+path)
		d.procs = append(d.procs, cmd.Process)
	}
	b.Cleanup(func() { d.resume(b) }) // before the processes are interrupted
	return d
}

// messageLoad sets up 100 conversations, each listened to on the node after
// the one its messages go to, and sends warmUp messages; it returns a
// function that sends count more and returns the time they took (each one
// received by its listener before it returns, untimed).
func (d *deployment) messageLoad(b *testing.B) func(count int64) time.Duration {
	at := func(i int64, shift int64) string { return d.webhooks[(i+shift)%int64(len(d.webhooks))] }
	key, convs := chatSetup(b, d.benchServer, 100)
	var received, n atomic.Int64
	lc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	for j, c := range convs {
		l := listen(b, lc, at(int64(j), 1), key, c, func(streamSignal) { received.Add(1) })
		b.Cleanup(l.close)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	send := func(i int64) error {
		body := map[string]any{"conversationId": convs[i%int64(len(convs))], "payload": map[string]any{"type": "text", "text": fmt.Sprintf("message %d", i)}}
		return chatCall(client, "POST", at(i, 0)+"/messages", key, body, nil)
	}
	sendBurst(b, &received, &n, warmUp, send)
	return func(count int64) time.Duration { return sendBurst(b, &received, &n, count, send) }
}
