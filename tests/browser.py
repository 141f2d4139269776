"""A headless Chromium driven through the Chrome DevTools Protocol (over the websockets package
that viser already needs): navigate, evaluate JavaScript, press keys, take screenshots. For the tests of
the browser viewer; :func:`find_chromium` says why there is none."""
from __future__ import annotations

import base64
import io
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-unsafe-swiftshader")   # software WebGL (the viewer's 3D) without a GPU


def find_chromium():
    """``(path, None)`` or ``(None, why not)``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path, None
    return None, ("no Chromium on the PATH (Debian: apt-get install -y chromium); the browser test of the "
                  "viewer needs a real browser")


class Browser:
    """One headless Chromium page, a fresh profile, closed by :meth:`close`."""

    def __init__(self, exe, width=800, height=600, timeout=30.0):
        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="screwdyn-chromium-")
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--window-size={width},{height}", "--remote-debugging-port=0",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not start its DevTools server")
            time.sleep(0.05)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=timeout) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=timeout)
        self.ids = itertools.count(1)
        self.timeout = timeout
        self.call("Page.enable")

    def call(self, method, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def goto(self, url):
        self.call("Page.navigate", url=url)

    def js(self, expression):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self) -> np.ndarray:
        from PIL import Image

        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def settled_screenshot(self, same=3, tries=60, pause=0.3) -> np.ndarray:
        """A screenshot once ``same`` in a row are alike (the page has drawn what it was sent and
        its fade-ins are over)."""
        last, run = self.screenshot(), 1
        for _ in range(tries):
            time.sleep(pause)
            now = self.screenshot()
            run = run + 1 if np.array_equal(now, last) else 1
            if run >= same:
                return now
            last = now
        return last

    def press(self, selector, key, code):
        """Focus the element ``selector`` and press a key on it (``"End"``, 35), as a user does."""
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def close(self):
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
