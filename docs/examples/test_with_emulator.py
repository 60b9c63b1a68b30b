"""A test suite in another language against one `svc emulator`, reset before each test.

Python's own unittest and urllib only. Run it inside `svc emulator exec`, which starts the
emulator, gives the suite its start line (SVC_EMULATOR_STARTUP) and stops it at the end:

    svc emulator exec -- python3 docs/examples/test_with_emulator.py

or let the suite start the `svc` binary itself:

    SVC_BIN=target/debug/svc python3 docs/examples/test_with_emulator.py

SVC_EMULATOR_ARGS adds flags to `svc emulator`: with a PostgreSQL test database,

    SHOP_DATABASE_URL=postgres://... SVC_EMULATOR_ARGS="--config docs/examples/ci/emulator.json" \
        SVC_BIN=target/debug/svc python3 docs/examples/test_with_emulator.py

(docs/testing.md; `cargo xtask ci` runs it both ways.)
"""

import json
import os
import shlex
import subprocess
import unittest
import urllib.error
import urllib.request

EMULATOR = None  # the startup line, once the suite's emulator is up
PROCESS = None


def setUpModule():
    """One emulator for the whole suite: its startup line has its URLs, project and key."""
    global EMULATOR, PROCESS
    if "SVC_EMULATOR_STARTUP" in os.environ:
        # Run by `svc emulator exec`: its emulator, already up.
        EMULATOR = json.loads(os.environ["SVC_EMULATOR_STARTUP"])
        return
    PROCESS = subprocess.Popen(
        [os.environ.get("SVC_BIN", "svc"), "emulator"]
        + shlex.split(os.environ.get("SVC_EMULATOR_ARGS", "")),
        stdout=subprocess.PIPE,
        text=True,
    )
    EMULATOR = json.loads(PROCESS.stdout.readline())


def tearDownModule():
    if PROCESS is not None:
        PROCESS.terminate()
        PROCESS.wait()


def call(method, path, body=None, auth=None):
    """One request to the data host; the status and the JSON answer."""
    request = urllib.request.Request(
        EMULATOR["api_base_url"] + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": auth or "Bearer " + EMULATOR["api_key"],
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


PRODUCTS = "/projects/{project}/{environment}/shop/models/products"


class ProductsTest(unittest.TestCase):
    def setUp(self):
        # A clean state for every test: the project as it was when the emulator started.
        status, _ = call("POST", "/_emulator/projects/%s/reset" % EMULATOR["project"])
        self.assertEqual(status, 200)
        self.products = PRODUCTS.format(**EMULATOR)

    def count(self):
        status, page = call("GET", self.products)
        self.assertEqual(status, 200)
        return page["count"]

    def test_a_created_product_is_listed(self):
        before = self.count()
        status, created = call(
            "POST", self.products, {"sku": "LAMP-1", "name": "Lamp", "price": 9.5}
        )
        self.assertEqual(status, 201, created)
        self.assertEqual(self.count(), before + 1)

    def test_the_same_sku_again_after_a_reset(self):
        # The other test's product is gone: its SKU, unique in the table, is free again.
        status, created = call(
            "POST", self.products, {"sku": "LAMP-1", "name": "Lamp", "price": 9.5}
        )
        self.assertEqual(status, 201, created)

    def test_a_retrieve_that_fails_twice_is_tried_again(self):
        # The code under test: one product, tried up to three times while the service says 500.
        def product(pk):
            for _ in range(3):
                status, answer = call("GET", "%s/%s" % (self.products, pk))
                if status != 500:
                    break
            return status, answer

        _, page = call("GET", self.products + "?_per_page=1")
        pk = page["results"][0]["id"]
        path = "%s/%s" % (self.products, pk)
        stubs = "/_emulator/projects/%s/stubs" % EMULATOR["project"]
        status, stub = call(
            "POST",
            stubs,
            {
                "request": {"method": "GET", "path": path},
                "response": {"status": 500, "json": {"error": "Server Error (500)"}},
                "times": 2,
            },
        )
        self.assertEqual(status, 201, stub)
        status, answer = product(pk)
        self.assertEqual((status, answer["id"]), (200, pk))
        # The stub answered twice: the code tried again.
        status, checked = call("GET", "%s/%s/expect?exactly=2" % (stubs, stub["id"]))
        self.assertTrue(checked["met"], checked["report"])

    def test_a_bad_snapshot_name_is_refused(self):
        status, answer = call(
            "POST", "/_emulator/projects/%s/snapshots" % EMULATOR["project"], {"name": "a/b"}
        )
        self.assertEqual(status, 400, answer)


if __name__ == "__main__":
    unittest.main()
