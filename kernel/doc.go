// Package kernel implements the Jupyter messaging protocol (version 5.3)
// over ZeroMQ (github.com/go-zeromq/zmq4): the connection file, the
// HMAC-SHA256-signed wire codec, the five sockets (shell, control, stdin,
// iopub, heartbeat), request dispatch, status and iopub publishing,
// interrupt and shutdown.
//
// It knows nothing of traces, SQL or DuckDB: cells are run by an Executor
// (implemented in package cells), and the kernel only moves its inputs and
// outputs between Jupyter and it. Installing the kernelspec and choosing the
// log file are the CLI's job (cli/cmd_kernel.go and cli/cmd_install.go).
//
// Spec: https://jupyter-client.readthedocs.io/en/latest/messaging.html
//
// # Files
//
//   - wire.go: Decode and Encode, the pure multipart codec.
//   - messages.go: typed content of each message type.
//   - executor.go: the Executor and Publisher interfaces, and IdleInterrupter
//     (an interrupt with no cell running).
//   - kernel.go: Run, sockets, dispatch, iopub queue, interrupt, shutdown.
//   - history.go: history_request over this kernel's executed cells.
//   - transport.go: the guarded TCP transport (see below).
//   - testdata/*.py: interoperability checks with jupyter_client and
//     jupyter_kernel_test, run by the tests when python3 has them.
//
// # Notes
//
// zmq4 v0.17.0 has faults the kernel designs around, each with a test:
//
//   - A TCP peer that connects and never completes the ZMTP handshake blocks
//     zmq4's accept loop, so no later client connects. The kernel binds
//     through its own transport, which hands a connection to zmq4 only after
//     the peer sent the ZMTP signature (read on a separate goroutine under a
//     deadline) and bounds the rest of the handshake.
//   - A subscriber that stops reading blocks zmq4's one PUB writer, and with
//     it iopub for every client, while zmq4's PUB Send never blocks: it
//     queues without bound (or, with a high-water mark, drops silently).
//     Here every write has a deadline after which the peer is disconnected
//     (writeTimeout, 10s); while a write is stalled the kernel stops handing
//     messages to zmq4, so that its own bounded queue (1024 messages) is the
//     one that fills. A full queue drops the cells' outputs (stream,
//     display_data, update_display_data, clear_output) with a log line and
//     never blocks Execute; the kernel's own messages (status,
//     execute_input, execute_result, error) wait for room instead, so that
//     busy/idle stay paired. Other clients go on receiving once the stalled one is dropped.
//   - A reply to an identity with no connection (the client left) is dropped
//     by zmq4 without an error; the kernel carries on.
//   - zmq4 allocates a frame from the size a peer announces; frames over
//     256 MiB close the connection instead.
//   - Closing a zmq4 PUB socket leaves its writer goroutine behind; one per
//     kernel, so one per process.
//   - zmq4 writes each frame's header and body separately (14 syscalls and
//     TCP segments for a Jupyter message); the transport coalesces them into
//     one write per message.
//
// PUB drops what it sends before a subscription arrives, and a client that
// starts the kernel connects its sockets on separate timers, so the kernel
// may answer a first request before iopub is subscribed (jupyter console
// then waits forever for the idle of its first cell). Until a first
// subscription, or for at most 2 seconds after the start, iopub messages
// wait instead (TestFirstSubscriberSeesEarlyMessages).
//
// Messages with a bad signature or malformed frames are dropped with a log
// line; Decode never panics (FuzzDecode).
package kernel
