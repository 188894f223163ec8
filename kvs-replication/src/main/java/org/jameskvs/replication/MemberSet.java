package org.jameskvs.replication;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The members a mutation waits for, or that answered ambiguously: at most a few (the copies of one
 * queue), so an array scan by identity is cheaper than hashing, and every request allocates one.
 * Iterates in insertion order.
 */
final class MemberSet extends AbstractSet<Member> {
    private Member[] members = new Member[2];
    private int size;

    @Override
    public boolean add(Member m) {
        if (indexOf(m) >= 0) {
            return false;
        }
        if (size == members.length) {
            members = Arrays.copyOf(members, size * 2);
        }
        members[size++] = m;
        return true;
    }

    @Override
    public boolean remove(Object o) {
        int i = indexOf(o);
        if (i < 0) {
            return false;
        }
        removeAt(i);
        return true;
    }

    @Override
    public boolean contains(Object o) {
        return indexOf(o) >= 0;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void clear() {
        Arrays.fill(members, 0, size, null);
        size = 0;
    }

    @Override
    public Iterator<Member> iterator() {
        return new Iterator<>() {
            private int next;
            private int last = -1;

            @Override
            public boolean hasNext() {
                return next < size;
            }

            @Override
            public Member next() {
                if (next >= size) {
                    throw new NoSuchElementException();
                }
                last = next;
                return members[next++];
            }

            @Override
            public void remove() {
                if (last < 0) {
                    throw new IllegalStateException();
                }
                removeAt(last);
                next = last;
                last = -1;
            }
        };
    }

    private int indexOf(Object o) {
        for (int i = 0; i < size; i++) {
            if (members[i] == o) {
                return i;
            }
        }
        return -1;
    }

    private void removeAt(int i) {
        System.arraycopy(members, i + 1, members, i, size - i - 1);
        members[--size] = null;
    }
}
