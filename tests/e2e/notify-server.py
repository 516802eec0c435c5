#!/usr/bin/python3
"""A stand-in desktop notification server for the end-to-end tests.

Run it inside its own session bus (`dbus-run-session -- /usr/bin/python3 notify-server.py
RECORD`): it owns `org.freedesktop.Notifications` on that bus, answers as a notification server
does (Desktop Notifications Specification 1.2), and appends one JSON line per `Notify` call to
RECORD (app name, summary, body, actions, hint names, the id it answered). It also owns
`org.kde.StatusNotifierWatcher`, the tray of most desktops: a line `tray FILE` writes to FILE
every registered tray item's label, title and status, read from the item over the bus. It prints
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


WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"


class Watcher(dbus.service.Object):
    """A tray (StatusNotifierWatcher, the protocol of KDE's, GNOME's AppIndicator extension and
    most panels) that records the items that register and can read their properties back."""

    def __init__(self, bus):
        super().__init__(bus, WATCHER_PATH)
        self.bus = bus
        self.items = []

    @dbus.service.method(WATCHER, in_signature="s", out_signature="", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        path = service if service.startswith("/") else "/StatusNotifierItem"
        name = sender if service.startswith("/") else service
        self.items.append((str(name), str(path)))
        self.StatusNotifierItemRegistered(f"{name}{path}")

    @dbus.service.method(WATCHER, in_signature="s", out_signature="")
    def RegisterStatusNotifierHost(self, service):
        pass

    @dbus.service.signal(WATCHER, signature="s")
    def StatusNotifierItemRegistered(self, item):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        return self.GetAll(interface)[prop]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "RegisteredStatusNotifierItems": dbus.Array([f"{n}{p}" for n, p in self.items], signature="s"),
            "IsStatusNotifierHostRegistered": True,
            "ProtocolVersion": dbus.Int32(0),
        }

    def state(self):
        """Every registered item's label, title and status, read from the item itself."""
        out = []
        for name, path in self.items:
            try:
                props = dbus.Interface(self.bus.get_object(name, path), dbus.PROPERTIES_IFACE).GetAll(ITEM)
                out.append({k: str(props.get(k, "")) for k in ("XAyatanaLabel", "Title", "Status", "Id")})
            except dbus.exceptions.DBusException as e:
                out.append({"error": str(e)})
        return out


def main():
    record = sys.argv[1]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(IFACE, bus, do_not_queue=True)
    server = Server(bus, record)
    tray_name = dbus.service.BusName(WATCHER, bus, do_not_queue=True)
    watcher = Watcher(bus)
    loop = GLib.MainLoop()

    def on_stdin(channel, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        parts = line.split()
        if len(parts) == 2 and parts[0] == "click":
            server.ActionInvoked(dbus.UInt32(int(parts[1])), "default")
        elif len(parts) == 2 and parts[0] == "tray":
            # Written whole through a temporary file, so the test never reads half of it.
            with open(parts[1] + ".tmp", "w", encoding="utf-8") as f:
                json.dump(watcher.state(), f)
            os.replace(parts[1] + ".tmp", parts[1])
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
    print("ready " + os.environ["DBUS_SESSION_BUS_ADDRESS"], flush=True)
    loop.run()
    del name, tray_name


if __name__ == "__main__":
    main()
