"""Conformance of the tracebook kernel to the Jupyter messaging protocol 5.3,
driven by Debian's jupyter_client (BlockingKernelClient) against the
installed kernelspec.

It covers what jupyter_kernel_test covers: kernel_info, streams,
execute_result, display_data, errors, completion, inspection, is_complete,
history; every message it receives is checked against a JSON schema of the
spec. The kernel under test is named by TRACEBOOK_KERNEL (default
"tracebook"); TRACEBOOK_TESTDATA points at the repository's testdata folder.
"""

import os
import queue
import time
import unittest

import jsonschema
from jupyter_client.manager import start_new_kernel

KERNEL = os.environ.get("TRACEBOOK_KERNEL", "tracebook")
TESTDATA = os.environ.get("TRACEBOOK_TESTDATA", os.path.join(os.path.dirname(__file__), "..", "..", "testdata"))
TIMEOUT = 30

# A small real trace from testdata/ (MIT, see testdata/README.md).
TRACE = os.path.join(TESTDATA, "hta", "critical_path_alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")

ISO_DATE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$"

HEADER = {
    "type": "object",
    "required": ["msg_id", "msg_type", "session", "username", "date", "version"],
    "properties": {
        "msg_id": {"type": "string", "minLength": 1},
        "msg_type": {"type": "string", "minLength": 1},
        "session": {"type": "string"},
        "username": {"type": "string"},
        "version": {"type": "string", "pattern": r"^5\.\d+$"},
    },
}

MIME_BUNDLE = {"type": "object", "additionalProperties": True}

CONTENT = {
    "status": {
        "type": "object",
        "required": ["execution_state"],
        "properties": {"execution_state": {"enum": ["busy", "idle", "starting"]}},
    },
    "execute_input": {
        "type": "object",
        "required": ["code", "execution_count"],
        "properties": {"code": {"type": "string"}, "execution_count": {"type": "integer"}},
    },
    "stream": {
        "type": "object",
        "required": ["name", "text"],
        "properties": {"name": {"enum": ["stdout", "stderr"]}, "text": {"type": "string"}},
    },
    "execute_result": {
        "type": "object",
        "required": ["execution_count", "data", "metadata"],
        "properties": {
            "execution_count": {"type": "integer"},
            "data": MIME_BUNDLE,
            "metadata": {"type": "object"},
        },
    },
    "display_data": {
        "type": "object",
        "required": ["data", "metadata"],
        "properties": {"data": MIME_BUNDLE, "metadata": {"type": "object"}, "transient": {"type": "object"}},
    },
    "update_display_data": {
        "type": "object",
        "required": ["data", "metadata", "transient"],
        "properties": {
            "data": MIME_BUNDLE,
            "metadata": {"type": "object"},
            "transient": {"type": "object", "required": ["display_id"]},
        },
    },
    "error": {
        "type": "object",
        "required": ["ename", "evalue", "traceback"],
        "properties": {
            "ename": {"type": "string"},
            "evalue": {"type": "string"},
            "traceback": {"type": "array", "items": {"type": "string"}},
        },
    },
    "execute_reply": {
        "type": "object",
        "required": ["status", "execution_count"],
        "properties": {"status": {"enum": ["ok", "error", "aborted"]}, "execution_count": {"type": "integer"}},
        "if": {"properties": {"status": {"const": "error"}}},
        "then": {"required": ["ename", "evalue", "traceback"]},
        "else": {"if": {"properties": {"status": {"const": "ok"}}}, "then": {"required": ["user_expressions"]}},
    },
    "kernel_info_reply": {
        "type": "object",
        "required": ["status", "protocol_version", "implementation", "implementation_version", "language_info", "banner"],
        "properties": {
            "status": {"const": "ok"},
            "protocol_version": {"type": "string", "pattern": r"^5\.\d+(\.\d+)?$"},
            "implementation": {"type": "string"},
            "implementation_version": {"type": "string"},
            "banner": {"type": "string"},
            "language_info": {
                "type": "object",
                "required": ["name", "version", "mimetype", "file_extension"],
                "properties": {"name": {"type": "string"}, "file_extension": {"type": "string"}},
            },
            "help_links": {"type": "array"},
        },
    },
    "complete_reply": {
        "type": "object",
        "required": ["status", "matches", "cursor_start", "cursor_end", "metadata"],
        "properties": {
            "status": {"const": "ok"},
            "matches": {"type": "array", "items": {"type": "string"}},
            "cursor_start": {"type": "integer", "minimum": 0},
            "cursor_end": {"type": "integer", "minimum": 0},
            "metadata": {"type": "object"},
        },
    },
    "inspect_reply": {
        "type": "object",
        "required": ["status", "found", "data", "metadata"],
        "properties": {"status": {"const": "ok"}, "found": {"type": "boolean"}, "data": MIME_BUNDLE},
    },
    "is_complete_reply": {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"enum": ["complete", "incomplete", "invalid", "unknown"]}},
        "if": {"properties": {"status": {"const": "incomplete"}}},
        "then": {"required": ["indent"]},
    },
    "history_reply": {
        "type": "object",
        "required": ["status", "history"],
        "properties": {"status": {"const": "ok"}, "history": {"type": "array", "items": {"type": "array", "minItems": 3, "maxItems": 3}}},
    },
    "comm_info_reply": {
        "type": "object",
        "required": ["status", "comms"],
        "properties": {"status": {"const": "ok"}, "comms": {"type": "object"}},
    },
    "comm_close": {"type": "object", "required": ["comm_id", "data"]},
    "shutdown_reply": {"type": "object", "required": ["status", "restart"]},
    "interrupt_reply": {"type": "object", "required": ["status"]},
}


def validate(msg):
    """Checks a received message against the spec's schema."""
    jsonschema.validate(msg["header"], HEADER)
    date = msg["header"].get("date")
    # jupyter_client parses the date into a datetime; the wire form is ISO 8601.
    if isinstance(date, str):
        jsonschema.validate(date, {"type": "string", "pattern": ISO_DATE})
    schema = CONTENT.get(msg["msg_type"])
    if schema is None:
        raise AssertionError("unexpected message type %r" % msg["msg_type"])
    jsonschema.validate(msg["content"], schema)


class KernelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=False)

    def setUp(self):
        self.flush_iopub()

    def flush_iopub(self):
        while True:
            try:
                self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                return

    def reply(self, msg_id, channel="shell"):
        get = self.kc.get_shell_msg if channel == "shell" else self.kc.get_control_msg
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            msg = get(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") == msg_id:
                validate(msg)
                return msg
        self.fail("no reply to %s" % msg_id)

    def iopub_until_idle(self, msg_id):
        """Returns the iopub messages parented to msg_id, up to and including idle."""
        out = []
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            validate(msg)
            out.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
        self.fail("no idle status for %s" % msg_id)

    def execute(self, code, **kw):
        msg_id = self.kc.execute(code, **kw)
        reply = self.reply(msg_id)
        outputs = self.iopub_until_idle(msg_id)
        return reply, outputs

    # --- tests -------------------------------------------------------------

    def test_kernel_info(self):
        msg_id = self.kc.kernel_info()
        reply = self.reply(msg_id)
        info = reply["content"]
        self.assertEqual(info["implementation"], "tracebook")
        self.assertEqual(info["language_info"]["name"], "sql")
        statuses = [m["content"]["execution_state"] for m in self.iopub_until_idle(msg_id) if m["msg_type"] == "status"]
        self.assertEqual(statuses, ["busy", "idle"])

    def test_execute_result_sequence(self):
        reply, outputs = self.execute("SELECT 42 AS answer, 'x' AS label")
        self.assertEqual(reply["content"]["status"], "ok")
        types = [m["msg_type"] for m in outputs]
        self.assertEqual(types[0], "status")
        self.assertEqual(outputs[0]["content"]["execution_state"], "busy")
        self.assertEqual(types[1], "execute_input")
        self.assertEqual(types[-1], "status")
        results = [m for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(len(results), 1)
        data = results[0]["content"]["data"]
        for mime in ("text/plain", "text/html", "application/json"):
            self.assertIn(mime, data)
        self.assertIn("42", data["text/plain"])
        self.assertIn("<table", data["text/html"])
        self.assertEqual(results[0]["content"]["execution_count"], reply["content"]["execution_count"])

    def test_execution_count_and_store_history(self):
        r1, _ = self.execute("SELECT 1")
        r2, _ = self.execute("SELECT 2")
        self.assertEqual(r2["content"]["execution_count"], r1["content"]["execution_count"] + 1)
        r3, _ = self.execute("SELECT 3", store_history=False)
        r4, _ = self.execute("SELECT 4")
        self.assertEqual(r4["content"]["execution_count"], r2["content"]["execution_count"] + 1)
        del r3

    def test_silent(self):
        reply, outputs = self.execute("SELECT 1", silent=True)
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertEqual([m["msg_type"] for m in outputs], ["status", "status"])

    def test_error(self):
        reply, outputs = self.execute("SELECT * FROM no_such_table_here")
        self.assertEqual(reply["content"]["status"], "error")
        errors = [m for m in outputs if m["msg_type"] == "error"]
        self.assertEqual(len(errors), 1)
        self.assertIn("no_such_table_here", errors[0]["content"]["evalue"])
        self.assertTrue(errors[0]["content"]["ename"])

    def test_display_data(self):
        # Loading a trace reports progress as display_data and a summary.
        reply, outputs = self.execute("%%trace load %s --name alexnet_conformance" % TRACE)
        if reply["content"]["status"] != "ok":
            reply, outputs = self.execute("%%trace load %s --name alexnet_conformance" % TRACE)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        displays = [m for m in outputs if m["msg_type"] == "display_data"]
        self.assertTrue(displays, [m["msg_type"] for m in outputs])
        self.assertTrue(displays[0]["content"]["transient"].get("display_id"))
        shown = [m for m in outputs if m["msg_type"] in ("display_data", "update_display_data", "execute_result")]
        text = "".join(
            m["content"].get("text", "") or m["content"].get("data", {}).get("text/plain", "") for m in shown
        )
        self.assertIn("alexnet_conformance", text)
        reply, outputs = self.execute("SELECT count(*) AS n FROM kernels WHERE trace = 'alexnet_conformance'")
        res = [m for m in outputs if m["msg_type"] == "execute_result"][0]
        self.assertIn("79", res["content"]["data"]["text/plain"])  # MANIFEST.md: 79 kernels

    def test_stream_stdout(self):
        reply, outputs = self.execute("%context tp=4")
        self.assertEqual(reply["content"]["status"], "ok")
        streams = [m for m in outputs if m["msg_type"] == "stream"]
        self.assertEqual(len(streams), 1, [m["msg_type"] for m in outputs])
        self.assertEqual(streams[0]["content"]["name"], "stdout")
        self.assertIn("tp = 4", streams[0]["content"]["text"])
        # Outputs come between execute_input and the idle status.
        types = [m["msg_type"] for m in outputs]
        self.assertLess(types.index("execute_input"), types.index("stream"))

    def test_help_output(self):
        reply, outputs = self.execute("%help")
        self.assertEqual(reply["content"]["status"], "ok")
        text = "".join(
            m["content"].get("text", "") or m["content"].get("data", {}).get("text/plain", "")
            for m in outputs
            if m["msg_type"] in ("stream", "display_data", "execute_result")
        )
        for magic in ("%trace", "%evidence", "%crossview", "%report", "%sql"):
            self.assertIn(magic, text)

    def test_complete_magic(self):
        code = "%tra"
        msg_id = self.kc.complete(code, len(code))
        c = self.reply(msg_id)["content"]
        self.assertIn("%trace", c["matches"])
        self.assertEqual(c["cursor_start"], 0)
        self.assertEqual(c["cursor_end"], len(code))

    def test_complete_unicode_offsets(self):
        # Cursor offsets are in code points: the prefix holds a non-ASCII literal.
        code = "SELECT 'héllo ✓' AS s FROM kern"
        msg_id = self.kc.complete(code, len(code))
        c = self.reply(msg_id)["content"]
        self.assertIn("kernels", c["matches"])
        self.assertEqual(c["cursor_end"], len(code))
        self.assertEqual(c["cursor_start"], len(code) - len("kern"))

    def test_inspect(self):
        code = "%trace"
        msg_id = self.kc.inspect(code, len(code))
        c = self.reply(msg_id)["content"]
        self.assertTrue(c["found"])
        self.assertIn("load", c["data"]["text/plain"])

    def test_is_complete(self):
        for code, want in (("SELECT 1", "complete"), ("SELECT 'abc", "incomplete"), ("SELECT (1", "incomplete"), ("%help", "complete")):
            msg_id = self.kc.is_complete(code)
            c = self.reply(msg_id)["content"]
            self.assertEqual(c["status"], want, code)

    def test_history(self):
        self.execute("SELECT 'history-marker-1' AS h")
        self.execute("SELECT 'history-marker-2' AS h")
        msg_id = self.kc.history(hist_access_type="tail", n=2, output=False, raw=True)
        h = self.reply(msg_id)["content"]["history"]
        self.assertEqual([e[2] for e in h], ["SELECT 'history-marker-1' AS h", "SELECT 'history-marker-2' AS h"])
        msg_id = self.kc.history(hist_access_type="search", pattern="*history-marker-1*", output=False, raw=True)
        h = self.reply(msg_id)["content"]["history"]
        self.assertTrue(h)
        self.assertTrue(all("history-marker-1" in e[2] for e in h))
        msg_id = self.kc.history(hist_access_type="range", session=0, start=1, stop=3, output=False, raw=True)
        self.assertIsInstance(self.reply(msg_id)["content"]["history"], list)

    def test_comm(self):
        msg_id = self.kc.comm_info()
        self.assertEqual(self.reply(msg_id)["content"]["comms"], {})
        msg = self.kc.session.msg("comm_open", {"comm_id": "c-1", "target_name": "no-such-target", "data": {}})
        self.kc.shell_channel.send(msg)
        closes = []
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and not closes:
            m = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if m["msg_type"] == "comm_close":
                validate(m)
                closes.append(m)
        self.assertEqual(closes[0]["content"]["comm_id"], "c-1")

    def test_background_load(self):
        # A load started with --background returns at once; %trace list
        # answers while it runs and shows it; the load's display goes on
        # updating after its cell went idle; the next query waits for it.
        seen = []  # every iopub message, whichever request it answers

        def run(code):
            msg_id = self.kc.execute(code)
            reply = self.reply(msg_id)
            deadline = time.time() + TIMEOUT
            while time.time() < deadline:
                msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
                validate(msg)
                seen.append(msg)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" \
                        and msg["content"]["execution_state"] == "idle":
                    return msg_id, reply, [m for m in seen if m["parent_header"].get("msg_id") == msg_id]
            self.fail("no idle status for %s" % msg_id)

        def shown(outputs):
            return "".join(
                m["content"].get("text", "") or m["content"].get("data", {}).get("text/plain", "")
                for m in outputs if m["msg_type"] in ("stream", "execute_result")
            )

        folder = os.path.join(TESTDATA, "param", "dlrm_8rank")
        # The trace is small (and may come from the parse cache): a load
        # can end before %trace list reaches the kernel, or after the list
        # but before the next query does. Such a try drops its trace and
        # starts again; one try must catch the load running in both.
        caught = 0
        for attempt in range(5):
            name = "dlrm_background_%d" % attempt
            load_id, reply, _ = run("%%trace load --background --name %s %s" % (name, folder))
            self.assertEqual(reply["content"]["status"], "ok")
            start = time.time()
            _, reply, outputs = run("%trace list")
            self.assertLess(time.time() - start, 1.0)
            self.assertEqual(reply["content"]["status"], "ok")
            if "in the background: load" in shown(outputs):
                caught += 1
                _, reply, outputs = run("SELECT count(DISTINCT rank) AS ranks FROM events WHERE trace = '%s'" % name)
                self.assertEqual(reply["content"]["status"], "ok")
                self.assertIn("8", [m for m in outputs if m["msg_type"] == "execute_result"][0]["content"]["data"]["text/plain"])
                if "waiting for the background load" in shown(outputs):
                    break
            _, reply, _ = run("%%trace drop %s" % name)
            self.assertEqual(reply["content"]["status"], "ok")
        self.assertTrue(caught, "no %trace list caught a background load in 5 tries")
        self.assertIn("waiting for the background load", shown(outputs),
                      "no query waited for a background load in 5 tries")
        # The load cell's display was updated after that cell went idle,
        # with its final line, parented to the load request.
        final = [m for m in seen if m["parent_header"].get("msg_id") == load_id and m["msg_type"] == "update_display_data"
                 and m["content"]["data"]["text/plain"].startswith("loaded 8 files")]
        self.assertTrue(final, "no final update_display_data for the background load")

    def test_interrupt(self):
        msg_id = self.kc.execute("SELECT count(*) FROM range(100000000000) a")
        time.sleep(0.5)
        start = time.time()
        self.km.interrupt_kernel()
        reply = self.reply(msg_id)
        self.assertLess(time.time() - start, 3.0)
        self.assertEqual(reply["content"]["status"], "error")
        self.iopub_until_idle(msg_id)
        after, _ = self.execute("SELECT 7 AS still_alive")
        self.assertEqual(after["content"]["status"], "ok")


if __name__ == "__main__":
    unittest.main(verbosity=2)
