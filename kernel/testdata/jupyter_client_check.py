"""Drive a running tracebook kernel with jupyter_client (libzmq).

Usage: python3 jupyter_client_check.py CONNECTION_FILE
Prints "OK" when every check passed; exits 1 with a message otherwise, 3
when jupyter_client is not installed.
Run by TestJupyterClient in kernel_jupyter_test.go.
"""
import os
import sys
import time

try:
    from jupyter_client import BlockingKernelClient
except ImportError:
    print("SKIP: no jupyter_client")
    sys.exit(3)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def kind(m):
    t = m["msg_type"]
    if t == "status":
        t += ":" + m["content"]["execution_state"]
    return t


kc = BlockingKernelClient(connection_file=sys.argv[1])
kc.load_connection_file()
kc.start_channels()
kc.wait_for_ready(timeout=20)


def iopub_for(msg_id):
    out = []
    while True:
        m = kc.get_iopub_msg(timeout=10)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(m)
        if kind(m) == "status:idle":
            return out


def shell_reply(msg_id):
    r = kc.get_shell_msg(timeout=10)
    if r["parent_header"]["msg_id"] != msg_id:
        fail("reply to another request: %r" % r["parent_header"])
    return r


# execute: the iopub sequence and the reply
mid = kc.execute("outputs")
r = shell_reply(mid)
got = [kind(m) for m in iopub_for(mid)]
want = ["status:busy", "execute_input", "stream", "display_data", "update_display_data", "execute_result", "status:idle"]
if got != want:
    fail("iopub %r, want %r" % (got, want))
if r["content"]["status"] != "ok" or r["content"]["execution_count"] != 1:
    fail("execute_reply %r" % r["content"])

# clear_output, at once and waiting for the next output
mid = kc.execute("clear")
shell_reply(mid)
msgs = iopub_for(mid)
got = [kind(m) for m in msgs]
want = ["status:busy", "execute_input", "stream", "clear_output", "display_data", "clear_output", "display_data", "status:idle"]
if got != want:
    fail("clear iopub %r, want %r" % (got, want))
waits = [m["content"]["wait"] for m in msgs if m["msg_type"] == "clear_output"]
if waits != [False, True]:
    fail("clear_output waits %r, want [False, True]" % waits)

# error
mid = kc.execute("fail")
r = shell_reply(mid)
if r["content"]["status"] != "error" or r["content"]["ename"] != "ValueError":
    fail("error reply %r" % r["content"])
iopub_for(mid)

# kernel_info, complete, inspect, is_complete, history
mid = kc.kernel_info()
r = shell_reply(mid)
if r["content"]["protocol_version"] != "5.3" or r["content"]["language_info"]["name"] != "sql":
    fail("kernel_info %r" % r["content"])
mid = kc.complete("é se", 4)
r = shell_reply(mid)
if r["content"]["matches"] != ["select", "set"] or r["content"]["cursor_start"] != 2:
    fail("complete %r" % r["content"])
mid = kc.inspect("select 1", 2)
r = shell_reply(mid)
if not r["content"]["found"]:
    fail("inspect %r" % r["content"])
mid = kc.is_complete("select")
r = shell_reply(mid)
if r["content"] != {"status": "incomplete", "indent": "  "}:
    fail("is_complete %r" % r["content"])
mid = kc.history(hist_access_type="tail", n=10, output=False, raw=True)
r = shell_reply(mid)
if [h[2] for h in r["content"]["history"]] != ["outputs", "clear", "fail"]:
    fail("history %r" % r["content"])

# interrupt a running cell through control
mid = kc.execute("sleep")
while True:
    m = kc.get_iopub_msg(timeout=10)
    if m["parent_header"].get("msg_id") == mid and m["msg_type"] == "execute_input":
        break
start = time.time()
msg = kc.session.msg("interrupt_request", {})
kc.control_channel.send(msg)
cr = kc.get_control_msg(timeout=10)
if cr["msg_type"] != "interrupt_reply":
    fail("control reply %r" % cr["msg_type"])
r = shell_reply(mid)
if r["content"].get("ename") != "KeyboardInterrupt" or time.time() - start > 1:
    fail("interrupt %r after %.2fs" % (r["content"], time.time() - start))

# heartbeat
if not kc.hb_channel.is_beating():
    fail("heartbeat")

# shutdown on control; iopub still delivers the idle
msg = kc.session.msg("shutdown_request", {"restart": False})
kc.control_channel.send(msg)
cr = kc.get_control_msg(timeout=10)
if cr["msg_type"] != "shutdown_reply" or cr["content"]["status"] != "ok":
    fail("shutdown reply %r" % cr["content"])
got = [kind(m) for m in iopub_for(msg["header"]["msg_id"])]
if got != ["status:busy", "shutdown_reply", "status:idle"]:
    fail("shutdown iopub %r" % got)
kc.stop_channels()
print("OK", flush=True)
os._exit(0)  # skip the interpreter's slow teardown of channel threads
