-- The ACRIS flight API (issue 36 item 3; docs/acris.md): a list request
-- selects one movement's flights (MVIN) whose scheduled (SODT) or estimated
-- (ESTT) home-airport time lies in a window, and takes the newest
-- UPDATED_AT of the window for Last-Modified. One index per time; the SODT
-- one carries STATE and UPDATED_AT, so the window's last change and its
-- ACTIVE page are read from the index alone for most of the window.
CREATE INDEX flight_schd_mvin_sodt_idx ON flight_schd (mvin, sodt) INCLUDE (state, updated_at);
CREATE INDEX flight_schd_mvin_estt_idx ON flight_schd (mvin, estt) WHERE estt IS NOT NULL;
