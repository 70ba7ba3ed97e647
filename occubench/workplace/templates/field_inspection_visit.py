"""Scheduling (easy): an inspector from the agriculture agency comes this afternoon and opens the visit with a
one-hour briefing at our office. The inspector says which hours they can come; the farm manager's calendar on the
drive rules out all but one; book a free room for the briefing and tell the farm manager."""

from __future__ import annotations

import random

from occubench.workplace.model import Clue, clock, minutes
from occubench.workplace.templates._shared import book, booked, csv, free_room, read_file, send_message, told
from occubench.workplace.templates.base import Family, Names, Piece, colleague, task

_FARMS = ("Hollowbrook Farm", "Greenacre Estate", "Millstone Farm", "Kestrel Fields", "Ashgrove Farm",
          "Brookside Holdings", "Larkrise Farm", "Foxglove Orchards", "Windmill Hill Farm", "Stonebridge Farm")
_CROPS = ("winter wheat", "oilseed rape", "sugar beet", "spring barley", "potato", "maize", "field bean",
          "apple orchard", "vineyard")
_PURPOSES = ("organic certification", "pesticide residue", "seed certification", "nitrate vulnerable zone",
             "plant health", "agri-environment scheme")
_AGENCIES = ("Regional Agriculture Agency", "Rural Payments Agency", "Plant Health Inspectorate",
             "Organic Certification Body")
_BLOCKS = ("Vet visit", "Feed delivery", "Machinery service", "Bank appointment", "Co-op board call",
           "Staff briefing", "Spraying window", "Contractor meeting", "Grain buyer call", "Soil sampling")
#: The hours the inspector may offer, all in the afternoon so the booking is still ahead when the day's
#: reference reaches it.
_HOURS = ("13:00", "14:00", "15:00", "16:00")
_MORNING = (("08:00", "09:00"), ("09:30", "10:30"), ("10:30", "11:30"), ("11:00", "12:00"), ("17:30", "18:30"))


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def build(rng: random.Random, names: Names, task_id: str) -> Piece:
    farm = names.pick(_FARMS)
    manager = colleague(names, "Farm manager", farm)
    inspector = colleague(names, "Field inspector", rng.choice(_AGENCIES))
    guests = [manager, inspector]
    if rng.random() < 0.5:
        guests.append(colleague(names, "Agronomist", "Crop Advisory"))
    offered = sorted(rng.sample(_HOURS, 3))
    slot = rng.choice(offered)
    span = (minutes(slot), minutes(slot) + 60)
    end = clock(span[1])
    blocks = []  # the farm manager's calendar: (start, end, what)
    for hour in (h for h in offered if h != slot):  # each other offered hour clashes with something
        shifts = [s for s in (-30, 0, 30) if not _overlaps((minutes(hour) + s, minutes(hour) + s + 60), span)]
        start = minutes(hour) + rng.choice(shifts)
        blocks.append((clock(start), clock(start + 60), rng.choice(_BLOCKS)))
    if rng.random() < 0.6 and span[0] - 60 >= minutes("12:00"):  # one that ends just as the free hour starts
        blocks.append((clock(span[0] - 60), slot, rng.choice(_BLOCKS)))
    for begin, finish in rng.sample(_MORNING, rng.randint(1, 3)):
        blocks.append((begin, finish, rng.choice(_BLOCKS)))
    blocks = sorted(set(blocks))
    seats = len(guests) + 1  # the guests and you
    room, busy = free_room(seats, slot, end)
    crop, purpose = rng.choice(_CROPS), rng.choice(_PURPOSES)
    inspector.clues.append(Clue(
        f"{task_id}-hours",
        f"This afternoon I can come to your office for the one-hour briefing at {', '.join(offered[:-1])} or "
        f"{offered[-1]} — whichever suits {farm}; after the briefing we walk the fields.",
        [["availab*", "free", "when", "time", "slot", "hour", "come", "arrive", "visit", "schedule"]]))
    attendees = [g.name for g in guests]
    calendar = f"farms/{farm.split()[0].lower()}_calendar_{task_id}.csv"
    others = " and ".join(g.name for g in guests[2:])
    return Piece(
        tasks=[task(task_id, FAMILY,
                    f"{inspector.name} ({inspector.department}) inspects {farm}'s {crop} fields this afternoon for "
                    f"the {purpose} check. The visit opens with a one-hour briefing at our office with "
                    f"{manager.name}, the farm manager" + (f", and {others}" if others else "") +
                    f". Find out from {inspector.name} which hours they can come, take the one that fits "
                    f"{manager.name}'s calendar ({calendar} on the drive), book a free room with a seat for each of "
                    f"them and for you, invite them, and tell {manager.name} when the briefing is, by {{deadline}}.",
                    [booked("briefing room booked at the hour that fits", 2, "Book a room with a seat for every guest "
                            "and you, for the one hour the inspector offered that does not clash with anything in the "
                            "farm manager's calendar, and invite everyone named.", slot, end, attendees, seats),
                     told("farm manager told the time", 1,
                          "Tell the farm manager the start and end of the briefing you booked.",
                          manager.name, [slot, end])],
                    [send_message(inspector.name, "When can you come to our office for the briefing this afternoon?"),
                     read_file(calendar),
                     *book(room, slot, end, seats, attendees),
                     send_message(manager.name, f"The inspection briefing is booked {slot}-{end} in {room}.")],
                    hints=(f"The inspector's possible hours come from the inspector, not the drive; the farm "
                           f"manager's commitments are in {calendar} on the drive; get_available_rooms shows which "
                           "rooms are free.",
                           f"Ask {inspector.name}, the field inspector, which hours this afternoon they can come "
                           f"for the briefing; {manager.name} only needs to be told the result.",
                           f"send_message {inspector.name} asking when they can come; read_file {calendar} and drop "
                           "every offered hour that overlaps one of its entries (an entry that ends exactly when an "
                           "hour starts does not clash); get_available_rooms for the remaining hour with a seat for "
                           "every guest and you; book_meeting a free room inviting every guest; send_message "
                           f"{manager.name} the start and end of the briefing."))],
        colleagues=guests,
        drive={calendar: csv("start,end,what", blocks)},
        busy=busy,
    )


FAMILY = Family("field_inspection_visit", "scheduling", "easy", "Agriculture & Environment", build)
