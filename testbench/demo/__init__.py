"""`make demo`: one P4 program from source to forwarded packets."""
