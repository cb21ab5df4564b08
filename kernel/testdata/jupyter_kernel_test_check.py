"""Run jupyter_kernel_test's KernelTests against the test kernel.

The kernelspec "tracebook-test" (written by TestJupyterKernelTest) starts
the kernel package's test binary, which serves a kernel with the tests'
Executor (see testExec in client_test.go for what each code does).
Exits 3 when jupyter_kernel_test is not importable.
"""
import sys
import unittest

try:
    import jupyter_kernel_test as jkt
except ImportError:
    print("SKIP: no jupyter_kernel_test")
    sys.exit(3)


class TracebookKernelTests(jkt.KernelTests):
    kernel_name = "tracebook-test"
    language_name = "sql"
    file_extension = ".sql"
    code_hello_world = "hello"
    code_stderr = "err"
    code_generate_error = "fail"
    completion_samples = [{"text": "sh", "matches": {"show"}}]
    complete_code_samples = ["select 1;"]
    incomplete_code_samples = ["select"]
    invalid_code_samples = ["select )"]
    code_execute_result = [
        {"code": "select 1", "result": "select 1"},
        {"code": "select 2", "result": "select 2"},
        {"code": "select 3", "result": "select 3"},
    ]
    code_display_data = [{"code": "display", "mime": "text/html"}]
    code_history_pattern = "select 1*"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "select"


if __name__ == "__main__":
    unittest.main(verbosity=2)
