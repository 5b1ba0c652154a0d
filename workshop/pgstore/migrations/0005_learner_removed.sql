-- A learner the instructor removed: their token stops working, their
-- events stay (the room's timeline), and they leave the class view.
ALTER TABLE learners ADD COLUMN removed_at timestamptz; -- NULL while in the room
