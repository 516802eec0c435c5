#!/usr/bin/python3
"""A stand-in desktop notification server for the end-to-end tests.

Run it inside its own session bus (`dbus-run-session -- /usr/bin/python3 notify-server.py
RECORD`): it owns `org.freedesktop.Notifications` on that bus, answers as a notification server
does (Desktop Notifications Specification 1.2), and appends one JSON line per `Notify` call to
RECORD (app name, summary, body, actions, hint names, the id it answered). It prints
`ready <bus address>` once the name is owned, so the test can start the app on the same bus.
A line `click <id>` on its standard input emits `ActionInvoked(id, "default")`, as a server does
when the person clicks the notification. It exits when its standard input closes.

Uses the system's python3-dbus and python3-gi (scripts/setup.sh installs them).
"""

import json
import os
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus, record):
        super().__init__(bus, PATH)
        self.record = record
        self.next_id = 0

    @dbus.service.method(IFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body", "actions"]

    @dbus.service.method(IFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("rd-e2e-notify", "resolve-desk", "1.0", "1.2")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        self.next_id += 1
        entry = {
            "id": self.next_id,
            "appName": str(app_name),
            "summary": str(summary),
            "body": str(body),
            "actions": [str(a) for a in actions],
            "hints": sorted(str(k) for k in hints.keys()),
        }
        with open(self.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        return dbus.UInt32(self.next_id)

    @dbus.service.method(IFACE, in_signature="u", out_signature="")
    def CloseNotification(self, notification_id):
        self.NotificationClosed(notification_id, dbus.UInt32(3))

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, notification_id, action_key):
        pass

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, notification_id, reason):
        pass


def main():
    record = sys.argv[1]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(IFACE, bus, do_not_queue=True)
    server = Server(bus, record)
    loop = GLib.MainLoop()

    def on_stdin(channel, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        parts = line.split()
        if len(parts) == 2 and parts[0] == "click":
            server.ActionInvoked(dbus.UInt32(int(parts[1])), "default")
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
    print("ready " + os.environ["DBUS_SESSION_BUS_ADDRESS"], flush=True)
    loop.run()
    del name


if __name__ == "__main__":
    main()
