"""A small client of the Chrome DevTools protocol for the browser tests: starts Debian's headless Chromium
with its own throw-away profile, opens one page in a target of its own, records every network request and
every console message or uncaught exception of that page, evaluates script, clicks like a user (mouse
events at a point, not element.click()), and saves screenshots. Every wait has a deadline."""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, timeout_s=60):
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="nm-chromium-")
        args = [CHROMIUM, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
                f"--user-data-dir={self.profile}", "--window-size=1400,1000", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = self._endpoint()
        self.ws = websocket.create_connection(url, timeout=timeout_s, suppress_origin=True)
        self.next_id = 1
        self.events = []       # (sessionId, method, params) in arrival order

    def _endpoint(self):
        deadline = time.monotonic() + self.timeout_s
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                if self.proc.poll() is not None:
                    break
                continue
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                return m.group(1)
        raise CdpError("chromium did not report its DevTools endpoint: " + "".join(seen[-5:]))

    def send(self, method, params=None, session=None):
        """Sends one command and returns its result; events arriving meanwhile are kept in self.events."""
        msg_id = self.next_id
        self.next_id += 1
        msg = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))
        raise CdpError(f"{method}: no reply within {self.timeout_s} s")

    def wait_event(self, method, session, predicate=lambda p: True):
        deadline = time.monotonic() + self.timeout_s
        checked = 0
        while True:
            for s, m, p in self.events[checked:]:
                if s == session and m == method and predicate(p):
                    return p
            checked = len(self.events)
            if time.monotonic() >= deadline:
                raise CdpError(f"no {method} within {self.timeout_s} s")
            reply = json.loads(self.ws.recv())
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))

    def open(self, url):
        """A new page showing `url`, with network, console and log recorded from before it loads."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.send(f"{domain}.enable", {}, session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session)
        page.start = len(self.events)
        self.send("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session)
        return page

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    def __init__(self, browser, session):
        self.browser = browser
        self.session = session
        self.start = 0

    def _events(self, method):
        return [p for s, m, p in self.browser.events[self.start:] if s == self.session and m == method]

    def requests(self):
        """URLs of every request the page made (the document itself included)."""
        self.evaluate("0")   # drains events that arrived since the last command
        return [p["request"]["url"] for p in self._events("Network.requestWillBeSent")]

    def console_errors(self):
        """Console errors and warnings, uncaught exceptions and log entries of level error, as text."""
        self.evaluate("0")
        out = []
        for p in self._events("Runtime.consoleAPICalled"):
            if p["type"] in ("error", "assert", "warning"):
                out.append(p["type"] + ": " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        for p in self._events("Runtime.exceptionThrown"):
            d = p["exceptionDetails"]
            out.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        for p in self._events("Log.entryAdded"):
            if p["entry"]["level"] in ("error", "warning"):
                out.append("log: " + p["entry"]["text"] + " " + p["entry"].get("url", ""))
        return out

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-serializable)."""
        r = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, self.session)
        if "exceptionDetails" in r:
            raise CdpError(f"{expression}: {r['exceptionDetails'].get('exception', {}).get('description', r['exceptionDetails'])}")
        return r["result"].get("value")

    def wait_for(self, expression):
        """Polls a JavaScript expression until it is truthy; returns its value."""
        deadline = time.monotonic() + self.browser.timeout_s
        while True:
            v = self.evaluate(expression)
            if v:
                return v
            if time.monotonic() >= deadline:
                raise CdpError(f"{expression}: still false after {self.browser.timeout_s} s")
            time.sleep(0.05)

    def click(self, selector):
        """Scrolls the element into view and clicks its centre with the mouse, as a user would."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                            f" e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();"
                            f" return [r.left + r.width / 2, r.top + r.height / 2]; }})()")
        if not box:
            raise CdpError(f"no element {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.browser.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}, self.session)

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            m = self.browser.send("Page.getLayoutMetrics", {}, self.session)["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": m["width"], "height": min(m["height"], 12000), "scale": 1}
        data = self.browser.send("Page.captureScreenshot", params, self.session)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path
