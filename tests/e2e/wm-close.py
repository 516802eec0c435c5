#!/usr/bin/env python3
"""Asks the app's window to close the way a window manager does (the title bar's close
button, Alt+F4): an X11 ClientMessage WM_PROTOCOLS / WM_DELETE_WINDOW sent to every top-level
window whose title is argv[1] (or argv[1] followed by " (…)", the pending count). GTK turns it into a delete-event, Tauri into CloseRequested.
Xvfb runs no window manager, so the test plays its part. Exit 1 if no window has the title.

Usage: wm-close.py TITLE   (DISPLAY must be set); wm-close.py --titles lists the top-level
windows' titles, one a line, and closes nothing.
"""
import ctypes
import ctypes.util
import sys

x = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
Window = ctypes.c_ulong
Atom = ctypes.c_ulong


class ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("l", ctypes.c_long * 5),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]


x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XDefaultRootWindow.restype = Window
x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x.XInternAtom.restype = Atom
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x.XQueryTree.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                         ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
x.XFetchName.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(ctypes.c_char_p)]
x.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.POINTER(XEvent)]
x.XFlush.argtypes = [ctypes.c_void_p]
x.XFree.argtypes = [ctypes.c_void_p]

CLIENT_MESSAGE = 33


def children(d, w):
    root, parent = Window(), Window()
    kids = ctypes.POINTER(Window)()
    n = ctypes.c_uint()
    if not x.XQueryTree(d, w, ctypes.byref(root), ctypes.byref(parent), ctypes.byref(kids), ctypes.byref(n)):
        return []
    out = [kids[i] for i in range(n.value)]
    if kids:
        x.XFree(kids)
    return out


def title(d, w):
    name = ctypes.c_char_p()
    if x.XFetchName(d, w, ctypes.byref(name)) and name.value is not None:
        return name.value.decode("utf-8", "replace")
    return None


def main():
    want = sys.argv[1]
    if want == "--titles":
        d = x.XOpenDisplay(None)
        for w in children(d, x.XDefaultRootWindow(d)):
            name = title(d, w)
            if name:
                print(name)
        return
    d = x.XOpenDisplay(None)
    if not d:
        sys.exit("wm-close: cannot open the X display (is DISPLAY set?)")
    protocols = x.XInternAtom(d, b"WM_PROTOCOLS", 0)
    delete = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
    sent = 0
    for w in children(d, x.XDefaultRootWindow(d)):
        name = title(d, w)
        # The title may carry the pending count: "Resolve Desk (3 pending)".
        if name is None or not (name == want or name.startswith(want + " (")):
            continue
        ev = XEvent()
        ev.xclient.type = CLIENT_MESSAGE
        ev.xclient.window = w
        ev.xclient.message_type = protocols
        ev.xclient.format = 32
        ev.xclient.l[0] = delete
        ev.xclient.l[1] = 0  # CurrentTime
        x.XSendEvent(d, w, 0, 0, ctypes.byref(ev))
        sent += 1
    x.XFlush(d)
    if sent == 0:
        sys.exit(f"wm-close: no top-level window titled {want!r}")
    print(f"wm-close: asked {sent} window(s) titled {want!r} to close")


main()
