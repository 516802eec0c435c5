#!/usr/bin/env python3
"""Takes the keyboard focus away from every window, as switching to another program does:
X11 `XSetInputFocus(None)`. Xvfb runs no window manager, so the test plays its part; GTK sees a
focus-out and the app's window reports that it is not focused.

Usage: x-unfocus.py   (DISPLAY must be set)
"""
import ctypes
import ctypes.util
import sys

x = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XSetInputFocus.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_ulong]
x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]

NONE = 0
REVERT_TO_NONE = 0
CURRENT_TIME = 0

d = x.XOpenDisplay(None)
if not d:
    sys.exit("x-unfocus: cannot open the X display (is DISPLAY set?)")
x.XSetInputFocus(d, NONE, REVERT_TO_NONE, CURRENT_TIME)
x.XSync(d, 0)
print("x-unfocus: the keyboard focus went to no window")
