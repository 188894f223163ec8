/**
 * The KVS wire protocol, version 2: the one place where the bytes on the wire are defined.
 *
 * <h2>Connection</h2>
 * One persistent TCP (optionally TLS) connection carries many requests in flight (pipelining).
 * The server answers every request exactly once, <b>in request order</b>, and reads and answers in
 * blocks: it decodes everything that one socket read delivered, applies it, commits the journal
 * once for the block (group commit) and flushes all the responses with one write. The first
 * request on a connection must be {@link org.jameskvs.protocol.Opcode#AUTH}; anything else is
 * answered {@link org.jameskvs.protocol.Status#AUTH_REQUIRED}.
 *
 * <h2>Framing</h2>
 * All integers are big-endian. Every frame, in either direction, starts with a 4-byte length that
 * counts the bytes <i>after</i> the length field.
 *
 * <h3>Request frame ({@link org.jameskvs.protocol.RequestDescriptor})</h3>
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                 frame length (int32, bytes after)             |  0
 * +---------------+---------------+-------------------------------+
 * |  version = 2  |    opcode     |         flags (uint16)        |  4
 * +---------------+---------------+-------------------------------+
 * |                 sequence number (int64)                       |  8
 * |                 chosen by the client, echoed in the response  |
 * +---------------------------------------------------------------+
 * |                 queue handle (int32), 0 when none             | 16
 * +---------------------------------------------------------------+
 * |                 payload (opcode specific) ...                 | 20
 * </pre>
 *
 * <h3>Response frame ({@link org.jameskvs.protocol.ResponseDescriptor})</h3>
 * <pre>
 * +---------------------------------------------------------------+
 * |                 frame length (int32, bytes after)             |  0
 * +---------------+---------------+-------------------------------+
 * |  version = 2  | opcode (echo) |      status code (uint16)     |  4
 * +---------------+---------------+-------------------------------+
 * |                 sequence number (int64, echo)                 |  8
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                 transaction number (int64)                    | 16
 * |   mutations the queue has applied; 0 for non-queue requests   |
 * +---------------------------------------------------------------+
 * |                 payload (opcode and status specific) ...      | 24
 * </pre>
 * An error response (status other than {@code OK}) carries as payload one
 * {@code string} with a human readable reason.
 *
 * <h3>Payload field types</h3>
 * <pre>
 * u8, u16, i32, i64   fixed width, big-endian
 * string              u16 length, then UTF-8 bytes (at most 65,535 bytes)
 * id                  u8 length (1..255), then the bytes of a client-chosen message id
 * blob                i32 length (&gt;= 0), then the bytes
 * tail                every remaining byte of the frame (no length field)
 * </pre>
 *
 * <h3>Operations ({@link org.jameskvs.protocol.Opcode})</h3>
 * <pre>
 * op            request payload                                   OK response payload
 * ------------  ------------------------------------------------  -------------------------------
 * AUTH    0x01  string user, string password                      (empty)
 * OPEN    0x02  string queue, u8 mode (0 read, 1 write),          i32 handle, i64 epoch,
 *               i64 epoch, i64 maxMessages (0 = server default),  i64 size, u8 queue flags,
 *               i64 maxBytes (0 = server default), string owner,  i64 last seq, i64 digest,
 *               optional i64 expected store (absent or 0: any;    i64 store
 *               another store than the server's: STORE_CHANGED,
 *               nothing created or fenced)
 * PUT     0x03  id, u8 priority, i64 notBefore (epoch ms),        i64 position
 *               blob state, tail body; flag 0x0001 in the header
 *               = replace a live message with this id atomically
 *               (PUT, DELETE, REPLACE, CLEAR: with flag 0x0002 the
 *               payload starts with i64 queue seq, see below;
 *               PUT with flag 0x0004: then i64 position, see
 *               Positions)
 * DELETE  0x04  id                                                (empty)
 * REPLACE 0x05  id, u8 priority, i64 notBefore, blob state        (empty)
 * GET     0x06  id                                                message record
 * READ    0x07  i64 fromPosition, i32 maxCount, i32 maxBytes,     i64 nextPosition, i32 count,
 *               i64 readyBefore (0 = no filter)                   count x message record
 * STAT    0x08  (empty)                                           i64 size, i64 bytes,
 *                                                                 i64 firstPosition,
 *                                                                 i64 nextPosition,
 *                                                                 i64 earliestNotBefore (smallest
 *                                                                 notBefore &gt; 0 among live
 *                                                                 messages; Long.MAX_VALUE if
 *                                                                 none is delayed),
 *                                                                 i64 epoch, string owner,
 *                                                                 u8 queue flags,
 *                                                                 i64 last seq, i64 digest,
 *                                                                 i64 store
 * LIST    0x09  (empty, handle 0)                                 i32 count, count x
 *                                                                 (string name, i64 size, i64 txn)
 * CLEAR   0x0A  (empty)                                           (empty)
 * DROP    0x0B  (empty)                                           (empty)
 * PING    0x0C  (empty, handle 0)                                 i64 server time (epoch ms)
 * CLOSE   0x0D  (empty) releases the handle                       (empty)
 * REBASE  0x0E  i64 seq, i64 digest (write handle)                (empty)
 *               [, i64 next position]
 * COMMIT  0x0F  i64 committed seq (write handle), see below       (empty)
 *
 * message record: i64 position, id, u8 priority, i64 notBefore, blob state, blob body
 * queue flags:    bit 0 ({@link org.jameskvs.protocol.QueueFlags#DAMAGED}) = this server's copy of
 *                 the queue is damaged; other bits 0
 * </pre>
 Each operation's payloads are written and read by its codec and nowhere else, client, server
 * and storage alike: {@link org.jameskvs.protocol.AuthCodec}, {@link org.jameskvs.protocol.OpenCodec},
 * {@link org.jameskvs.protocol.PutCodec}, {@link org.jameskvs.protocol.DeleteCodec},
 * {@link org.jameskvs.protocol.ReplaceCodec}, {@link org.jameskvs.protocol.GetCodec},
 * {@link org.jameskvs.protocol.ReadCodec}, {@link org.jameskvs.protocol.StatCodec},
 * {@link org.jameskvs.protocol.ListCodec}, {@link org.jameskvs.protocol.PingCodec},
 * {@link org.jameskvs.protocol.RebaseCodec}; CLEAR, DROP and CLOSE have no payload
 * ({@link org.jameskvs.protocol.Requests#empty}, {@link org.jameskvs.protocol.Frames#writeEmptyOk});
 * the sequenced prefix is {@link org.jameskvs.protocol.SequencedPrefix}, error answers
 * {@link org.jameskvs.protocol.ErrorResponse}, the message record
 * {@link org.jameskvs.protocol.MessageRecord}. {@code OpcodeGoldenTest} pins their bytes.
 *
 * <h3>The message record is the journal's PUT tail</h3>
 * The server's journal stores a PUT (and a compaction's COPY) as its record header followed by
 * exactly the bytes of the message record ({@link org.jameskvs.protocol.MessageRecordDescriptor};
 * the server's {@code JournalRecordDescriptor} draws the whole record), and answers GET and READ
 * by copying those bytes from the journal. <b>Changing the message record therefore changes the
 * journal format</b>: it needs a new protocol version <i>and</i> a new journal record layout
 * version whose replay still reads the old records (journals written before must replay), and a
 * re-encoding on the server's GET and READ path for records of the old layout.
 *
 * <h3>OPEN and STAT answers, from the queue flags on</h3>
 * <pre>
 * +---------------+-----------------------------------------------+
 * | queue flags u8|  last seq (int64): data mutations applied ... |
 * +---------------+-----------------------------------------------+
 * | ... (PUT, DELETE, REPLACE, CLEAR; not OPEN)   |  digest ...   |
 * +-----------------------------------------------+---------------+
 * |  ... (int64): rolling digest over those mutations, in order   |
 * +---------------------------------------------------------------+
 * |  store (int64): which store of the node holds the copy        |
 * +---------------------------------------------------------------+
 * </pre>
 * The <b>store</b> is a random non-zero number a server draws when it first uses its data
 * directory and keeps across restarts; a server started on an empty directory (a lost disk) has a
 * new one. A writer records the stores of the nodes it heard in its membership records, and so
 * tells a node that restarted with its data from one that lost it. A payload that ends before it
 * (a server from before it) reads as 0: unknown.
 * <b>Copies are compared by content, not by counters</b>: two copies of a queue are equal iff their
 * (epoch, last seq, digest) are equal. The digest folds, for every data mutation in order, its seq,
 * its operation, the CRC32C of its id and the CRC32C of what it carries after the id (priority,
 * notBefore, state and body), so a copy that lost one mutation anywhere (a record of an older
 * journal file, a node's power loss) has another digest from there on, even where its counts still
 * match. Owner changes (a write OPEN at a higher epoch) are not in the seq or the digest. The server
 * keeps both across restarts (its journal records them; see its crash contract).
 * {@code REBASE} is the end of a rebuild: the rebuilt copy holds its source's live messages in the
 * source's order, and takes over the source's last seq and digest (read by a STAT in the source's
 * stream at the point where the rebuild's copying ended), so the two compare equal from then on.
 * It does not change the transaction number. Its optional third field is the source's next
 * position at that point: the rebuilt copy gives its next PUT the position the source gives it
 * (absent, from writers before it: the copy keeps its own). With flag 0x0020 ({@code
 * RequestDescriptor.FLAG_IF_AT}) REBASE is conditional: a fourth field, the expected digest, and the
 * copy takes the new digest only if it is at exactly that seq with that digest (NOT_FOUND otherwise,
 * nothing changed; OK when it already has the new one). The writer uses it to align two copies that
 * hold the same live messages but whose digests differ by refusals only one of them made (a full
 * store's DISK_FULL to a PUT the other copy took, once that PUT is undone).
 *
 * <h3>Sequenced mutations (flag 0x0002)</h3>
 * The queue's one writer (the replication layer) numbers every mutation it sends, PUT, DELETE,
 * REPLACE and CLEAR alike, with the queue's next seq, and sends it first in the payload:
 * <pre>
 * +---------------+---------------+---------------+---------------+
 * | ...request header, flags = 0x0002 (| 0x0001 for a replacing PUT)  |
 * +---------------------------------------------------------------+
 * |                 queue seq (int64, &gt;= 1)                        | 20
 * +---------------------------------------------------------------+
 * |                 the operation's payload as above ...          | 28
 * </pre>
 * The server applies it only when it is the queue's last seq + 1 (a write OPEN does not take a
 * seq). A refusal that is the mutation's outcome (NOT_FOUND, DUPLICATE_ID, QUEUE_FULL,
 * BAD_REQUEST) takes the seq too, so both copies stay in step; so does DISK_FULL (the refusal is
 * recorded in the store's reserve: one copy's node may be full while the other's took the PUT). A
 * store that cannot record even that answers STORAGE_ERROR, which takes no seq. A <b>repeat</b> (seq &lt;= last) is
 * answered with the outcome of the first time, its status, transaction number and (PUT) position,
 * and applies nothing: a retry after a lost answer or a path switch is idempotent. The server keeps
 * the outcomes of a queue's latest 2,048 seqs (across restarts, from its journal); an older repeat
 * is answered {@code SEQ_TOO_OLD}. A <b>gap</b> (seq &gt; last + 1) applies nothing and is answered
 * {@code SEQ_GAP}, whose payload is the reason string followed by {@code i64} the queue's last seq:
 * the writer resends from there. Without the flag the server takes the next seq itself (clients of
 * a single server).
 *
 * <h3>The commit point (flag 0x0008, COMMIT)</h3>
 * A replicated queue's writer knows which seqs both copies hold; readers of one copy (read
 * handles) must not see a mutation beyond that, or they would hand out mail whose PUT may still fail
 * (it is on this copy only). So the writer declares it: a sequenced mutation with flag 0x0008
 * ({@code FLAG_COMMITTED}, only with 0x0002: else {@code BAD_REQUEST}) carries its committed seq right
 * after the queue seq, and when it has no mutation to send, a {@code COMMIT} request carries it alone:
 * <pre>
 * +---------------+---------------+---------------+---------------+
 * | ...request header, flags = 0x000A (| 0x0001 for a replacing PUT)  |
 * +---------------------------------------------------------------+
 * |                 queue seq (int64, &gt;= 1)                        | 20
 * +---------------------------------------------------------------+
 * |                 committed seq (int64, &gt;= 0)                    | 28
 * +---------------------------------------------------------------+
 * |                 the operation's payload as above ...          | 36
 *
 * +---------------+---------------+---------------+---------------+
 * | ...request header, opcode 0x0F COMMIT, flags 0 (write handle)   |
 * +---------------------------------------------------------------+
 * |                 committed seq (int64, &gt;= 0)                    | 20
 * +---------------------------------------------------------------+
 * </pre>
 * The server keeps per queue the highest value declared, at most its last seq (taken before the
 * mutation is applied, also for a repeat; not for a gap; a REBASE lowers it to the new seq if
 * needed); it is not a mutation (the transaction number does not move) and is journaled, so a
 * restart never shows more than was declared. <b>READ and GET on a read handle</b> then show no
 * message whose position (its PUT's seq) is above it: READ stops before the first one
 * ({@code nextPosition} is its position, so the reader reads it once it is committed), GET answers
 * {@code NOT_FOUND}. Ids starting with a zero byte (the replication's own record) are not held back.
 * A queue whose next position is above its last seq + 1 (numbered by PUTs before positions were
 * seqs) is read as before. The write handle sees everything, and so does a READ or GET with flag 0x0010
 * ({@code FLAG_UNCOMMITTED}: operators and tests inspecting one copy as it is). A queue never given a commit point (single-server clients,
 * writers before this revision) is read as before: up to its last seq. COMMIT is answered like
 * other mutations on a read handle ({@code READ_ONLY}) or a fenced one ({@code STALE_EPOCH}).
 * Only what a PUT adds is held back: a DELETE or REPLACE beyond the commit point is visible at once.
 *
 * <h3>Queue flags</h3>
 * The {@code u8 queue flags} that end OPEN and STAT answers were added after the other fields, so
 * a client that stops reading before them is unaffected. {@code DAMAGED} means the server's
 * recovery found journal records of this queue lost or unreadable (the crash contract in the
 * server's {@code QueueStore}): the copy may lack acknowledged messages or hold deleted ones. It is
 * still served, and stays flagged across restarts until CLEAR or DROP. Its transaction number may
 * still equal an intact copy's (the lost records' numbers were counted), so a client comparing
 * copies must treat a DAMAGED copy as out of sync and rebuild it from an intact one.
 *
 * <h3>Positions</h3>
 * <b>A PUT's position is its seq</b>: the queue's seq once the PUT is applied (the writer's, with
 * flag 0x0002, or the one the server takes), or the queue's next position when that is higher (a
 * queue whose positions were counted by PUTs before this rule). So two copies of a queue that
 * applied the same mutations give every message the same position, and a reader's cursor is valid
 * on either. A <b>PUT with flag 0x0004</b> ({@code FLAG_POSITIONED}) takes the {@code i64 position}
 * that follows the header (after the queue seq if 0x0002 is set too; &gt;= 1, else
 * {@code BAD_REQUEST}): a rebuild copies its source's messages with their positions, also below
 * the copy's tail, and a position another live message holds is refused {@code BAD_REQUEST}
 * (checked while the copy's order is intact; a copy being rebuilt is trusted). The answer is the
 * position taken. Servers before this revision do not know the flag: a rebuild target must run
 * this revision or a later one. Positions strictly increase per queue otherwise; a queue is
 * physically stored in position order (after copies below the tail, the order is restored at the
 * next read). {@code READ} returns live messages with
 * {@code position >= fromPosition} in position order, skipping (when {@code readyBefore != 0})
 * those whose {@code notBefore > readyBefore}; it stops after {@code maxCount} messages or once
 * {@code maxBytes} of bodies are exceeded (at least one message is returned if any matches), and
 * {@code nextPosition} is where the next block starts. The <i>state</i> blob is the small mutable
 * part of a message (retry count, error text, ...) that {@code REPLACE} rewrites without moving the
 * message; the body is immutable.
 *
 * <h3>Ownership and epochs</h3>
 * A queue has at most one writer: the connection holding a handle opened in write mode. OPEN in
 * write mode with an epoch lower than the queue's is refused ({@code STALE_EPOCH}); with the same
 * epoch while another connection holds the write handle it is refused ({@code QUEUE_LOCKED}); with
 * a higher epoch it takes the queue over and every older write handle is fenced: its mutations are
 * answered {@code STALE_EPOCH}. Mutations on a read handle are answered {@code READ_ONLY}.
 *
 * <h3>Errors and framing</h3>
 * A frame longer than the server's limit is skipped and answered {@code FRAME_TOO_LARGE}; framing
 * is kept. A frame whose length is shorter than the fixed header, or an unknown protocol version,
 * means framing is lost: the server answers {@code BAD_FRAME} (sequence 0) and closes the
 * connection. For a version the reason names both ("server speaks protocol version 2, client sent
 * 1"); the answer is a frame of the server's version, so a client of another version reports the
 * mismatch from its side ("client speaks protocol version 1, server sent 2"). A client that
 * receives {@code BAD_FRAME} fails the connection with the server's reason. Every other bad input
 * (unknown opcode, malformed payload, bad handle, ...) is answered with its status code and the
 * connection goes on.
 */
package org.jameskvs.protocol;
